package sqlite

import "database/sql"

// What the tests look into.

func DBOf(s *Store) *sql.DB  { return s.db }
func PagesOf(s *Store) int64 { return s.pages.Load() }
func SchemaVersion() int     { return schemaVersion }

const PageRows, PageBytes = pageRows, pageBytes
