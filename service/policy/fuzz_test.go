package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzPolicyLoad layers two arbitrary files, as managed and user file. It
// checks that loading never panics and that a configuration that loads:
//   - validates clean,
//   - has a source for every leaf,
//   - narrows the managed file: written out and loaded back as the user
//     file over the same managed file, it loads to itself.
func FuzzPolicyLoad(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	var files [][]byte
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, data)
	}
	for _, user := range files {
		f.Add([]byte(nil), user)
		for _, managed := range files {
			f.Add(managed, user)
		}
	}
	f.Fuzz(func(t *testing.T, managedData, userData []byte) {
		l, err := loadBytes(managedData, userData)
		if err != nil {
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("loaded without error but Validate: %v", err)
		}
		for _, lf := range leaves() {
			if _, ok := l.Sources[lf.path]; !ok {
				t.Fatalf("no source for %s", lf.path)
			}
		}
		out, err := yaml.Marshal(&l.Config)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := loadBytes(managedData, out)
		if err != nil {
			t.Fatalf("effective config does not load back over the managed file: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(again.Config, l.Config) {
			t.Fatalf("round trip changed the config:\n got %+v\nwant %+v", again.Config, l.Config)
		}
	})
}

// loadBytes is Load on file contents; nil means no file.
func loadBytes(managedData, userData []byte) (*Loaded, error) {
	var managed, user *layer
	var errs []error
	if managedData != nil {
		var e []error
		managed, e = parseLayer("managed.yaml", managedData, testHome)
		errs = append(errs, e...)
	}
	if userData != nil {
		var e []error
		user, e = parseLayer("config.yaml", userData, testHome)
		errs = append(errs, e...)
	}
	return build(managed, nil, user, testHome, errs)
}
