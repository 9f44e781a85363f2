// Package codemode offers the model a code tool.
package codemode
