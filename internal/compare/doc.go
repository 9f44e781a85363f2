// Package compare holds benchmarks that set toolloop's modules side by
// side: the same tool in process, in a plugin process and behind an MCP
// stdio server.
//
// It is a module of its own, never published or imported, so that what a
// comparison needs (here the plugin module and the MCP SDK together)
// reaches no user's module graph and no other module's go.mod.
package compare
