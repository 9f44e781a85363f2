// Command toolloop is placeholder
package main
