package capmap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// populate gives every slice of structs one zero element and every pointer
// to a struct a zero value, recursively; slices of scalars stay nil.
func populate(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			populate(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				populate(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			for i := 0; i < v.Len(); i++ {
				populate(v.Index(i), depth+1)
			}
		}
	}
}

// checkLists fails for every list field of type t that is null or missing in
// the decoded JSON value v (pool ids, omitempty, may be absent).
func checkLists(t *testing.T, typ reflect.Type, v any, path string) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			if v != nil {
				t.Errorf("%s: %T, want an object", path, v)
			}
			return
		}
		for i := 0; i < typ.NumField(); i++ {
			sf := typ.Field(i)
			name := strings.Split(sf.Tag.Get("json"), ",")[0]
			if !sf.IsExported() || name == "-" || name == "" {
				continue
			}
			fv, present := obj[name]
			if sf.Type.Kind() == reflect.Slice && !keepNil(sf) {
				if _, isList := fv.([]any); !present || !isList {
					t.Errorf("%s.%s: %v (present %v), want a list", path, name, fv, present)
					continue
				}
			}
			if present {
				checkLists(t, sf.Type, fv, path+"."+name)
			}
		}
	case reflect.Slice:
		if l, ok := v.([]any); ok {
			for i, e := range l {
				checkLists(t, typ.Elem(), e, path+"[]")
				_ = i
			}
		}
	}
}

func writeAndDecode(t *testing.T, m *Map) any {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.json")
	if err := m.Write(p); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every list field of a written map is a JSON list, never null or missing:
// the GPU run's maps without findings said "findings": null and the GPU
// checker crashed on them.
func TestListsNeverNull(t *testing.T) {
	empty := &Map{Schema: Schema, Version: Version}
	checkLists(t, reflect.TypeOf(Map{}), writeAndDecode(t, empty), "map")
	full := &Map{Schema: Schema, Version: Version}
	populate(reflect.ValueOf(full), 0)
	if len(full.Graphs) != 1 || len(full.Graphs[0].Inputs) != 1 || full.Graphs[0].Inputs[0].ReboundTo == nil || len(full.Findings) != 1 {
		t.Fatalf("populate: %+v", full)
	}
	checkLists(t, reflect.TypeOf(Map{}), writeAndDecode(t, full), "map")

	// A map as an older capguard wrote it (nulls) loads and is written with lists.
	data := `{"schema": "capguard-capture-map", "version": 1, "command": null, "hooked": null,
	  "graphs": [{"id": 0, "status": "captured", "functions": null, "inputs": null, "replay_prep": null, "between": null}],
	  "findings": null, "tracer_errors": null}`
	m, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if m.Findings == nil || m.Graphs[0].Functions == nil || m.TracerErrors == nil {
		t.Errorf("Parse left nil lists: %+v", m)
	}
	v := writeAndDecode(t, m)
	checkLists(t, reflect.TypeOf(Map{}), v, "map")
	if f := v.(map[string]any)["findings"]; f == nil {
		t.Error(`"findings" is null`)
	}
	// Merge (capguard trace's collectMaps) keeps them lists.
	checkLists(t, reflect.TypeOf(Map{}), writeAndDecode(t, Merge(m, empty)), "merged")
}
