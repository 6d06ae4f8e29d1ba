// Command app prints a greeting from the local greet module.
package main

import (
	"fmt"
	"os"

	"example.com/greet"
)

func main() {
	fmt.Println(greet.Hello(name(os.Args[1:])))
}

func name(args []string) string {
	if len(args) == 0 {
		return "world"
	}
	return args[0]
}
