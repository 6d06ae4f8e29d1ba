package policy

import (
	"fmt"
	"math"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ByteSize
	}{
		{"0", 0},
		{"4096", 4096},
		{"512B", 512},
		{"1KiB", 1024},
		{"1MiB", 1 << 20},
		{"4GiB", 4 << 30},
		{"2TiB", 2 << 40},
		{"1KB", 1000},
		{"1MB", 1000000},
		{"8GB", 8000000000},
		{"1TB", 1000000000000},
		{"1 MiB", 1 << 20},
		{" 64MiB ", 64 << 20},
		{"8388607TiB", 8388607 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseByteSize(tt.in)
			if err != nil {
				t.Fatalf("ParseByteSize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseByteSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseByteSizeErrors(t *testing.T) {
	t.Parallel()
	const forms = "want an integer number of bytes or an integer with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), like 512MiB"
	tests := []struct {
		in, want string
	}{
		{"", `"" is not a size; ` + forms},
		{"lots", `"lots" is not a size; ` + forms},
		{"MiB", `"MiB" is not a size; ` + forms},
		{"-1", `"-1" is negative; ` + forms},
		{"-4GiB", `"-4GiB" is negative; ` + forms},
		{"1.5GiB", `"1.5GiB" is not a whole number; ` + forms},
		{"1mib", `"1mib" has an unknown unit "mib"; ` + forms},
		{"1Gb", `"1Gb" has an unknown unit "Gb"; ` + forms},
		{"1G", `"1G" has an unknown unit "G"; ` + forms},
		{"1 2", `"1 2" has an unknown unit "2"; ` + forms},
		{"8388608TiB", `"8388608TiB" is too large`},
		{"99999999999999999999", `"99999999999999999999" is too large`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			_, err := ParseByteSize(tt.in)
			if err == nil {
				t.Fatalf("ParseByteSize(%q) succeeded, want error %q", tt.in, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestByteSizeString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   ByteSize
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1023, "1023B"},
		{1024, "1KiB"},
		{1536, "1536B"},
		{MiB, "1MiB"},
		{64 * MiB, "64MiB"},
		{1024 * MiB, "1GiB"},
		{4 * GiB, "4GiB"},
		{3 * TiB, "3TiB"},
		{1000, "1KB"},
		{2000, "2KB"},
		{8 * GB, "8GB"},
		{TB, "1TB"},
		{1024 * TB, "1024TB"}, // also 976562500MiB
		{2048000, "2000KiB"},  // also 2048KB
		{1024 * MB, "1024MB"}, // also 1000000KiB
		{-MiB, "-1MiB"},
		{math.MaxInt64, "9223372036854775807B"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := tt.in.String(); got != tt.want {
				t.Errorf("ByteSize(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
			}
		})
	}
}

func TestByteSizeRoundTrip(t *testing.T) {
	t.Parallel()
	sizes := []ByteSize{0, 1, 999, 1000, 1024, 4095, MiB + 1, 5 * GB, 7 * TiB, 1 << 62, math.MaxInt64}
	for _, b := range sizes {
		s := b.String()
		got, err := ParseByteSize(s)
		if err != nil {
			t.Errorf("ParseByteSize(%q) (from %d): %v", s, int64(b), err)
			continue
		}
		if got != b {
			t.Errorf("ParseByteSize(%q) = %d, want %d", s, int64(got), int64(b))
		}
	}
}

func TestByteSizeYAML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    ByteSize
		wantErr string
	}{
		{in: "size: 1048576", want: MiB},
		{in: "size: 0x400", want: KiB},
		{in: "size: 1MiB", want: MiB},
		{in: `size: "2GiB"`, want: 2 * GiB},
		{in: "size: -5", wantErr: `"-5" is negative; ` + sizeForms},
		{in: "size: 1.5", wantErr: `"1.5" is not a size; ` + sizeForms},
		{in: "size: true", wantErr: `"true" is not a size; ` + sizeForms},
		{in: "size: [1]", wantErr: "want a size, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var v struct{ Size ByteSize }
			err := yaml.Unmarshal([]byte(tt.in), &v)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Size != tt.want {
				t.Errorf("got %v, want %v", v.Size, tt.want)
			}
		})
	}

	out, err := yaml.Marshal(struct{ Size ByteSize }{4 * GiB})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "size: 4GiB\n"; got != want {
		t.Errorf("Marshal: got %q, want %q", got, want)
	}
}

func ExampleParseByteSize() {
	for _, s := range []string{"512KiB", "1048576", "4GB", "4gb"} {
		b, err := ParseByteSize(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s = %d bytes = %v\n", s, int64(b), b)
	}
	// Output:
	// 512KiB = 524288 bytes = 512KiB
	// 1048576 = 1048576 bytes = 1MiB
	// 4GB = 4000000000 bytes = 4GB
	// error: "4gb" has an unknown unit "gb"; want an integer number of bytes or an integer with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), like 512MiB
}
