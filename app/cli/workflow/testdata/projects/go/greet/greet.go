// Package greet builds greetings.
package greet

// Hello greets name.
func Hello(name string) string { return "hello, " + name }
