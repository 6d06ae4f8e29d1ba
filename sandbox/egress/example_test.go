package egress_test

import (
	"fmt"

	"github.com/gatehouse-dev/gatehouse/sandbox/egress"
)

func ExampleParseEntry() {
	for _, s := range []string{"*.Example.com:8443", "[::1]:8080", "*.com", "example.com."} {
		e, err := egress.ParseEntry(s)
		if err != nil {
			fmt.Printf("%q %v\n", s, err)
			continue
		}
		fmt.Printf("%q: host %s, port %d\n", s, e.Host, e.Port)
	}
	// Output:
	// "*.Example.com:8443": host *.example.com, port 8443
	// "[::1]:8080": host ::1, port 8080
	// "*.com" is too broad: it matches every name under the top-level domain "com"; want a pattern like "*.example.com"
	// "example.com." ends in a dot; write the name without it
}
