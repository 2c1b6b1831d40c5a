package capmap

import (
	"reflect"
	"strings"
)

// fillLists makes every nil slice reachable from v (a pointer) an empty one,
// so that the JSON a map is written as has a list wherever the schema has one
// (`"findings": []`, never `null`): readers iterate without a nil check. The
// pool ids (Graph.Pool, Input.SegmentPool) are left nil, since they are
// omitted when unknown.
func fillLists(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			fillLists(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			f := v.Field(i)
			if f.Kind() == reflect.Map && f.IsNil() && !keepNil(sf) {
				f.Set(reflect.MakeMap(f.Type()))
				continue
			}
			if f.Kind() == reflect.Slice && f.IsNil() {
				if keepNil(sf) {
					continue
				}
				f.Set(reflect.MakeSlice(f.Type(), 0, 0))
			}
			fillLists(f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			fillLists(v.Index(i))
		}
	}
}

// keepNil reports whether a slice field may stay absent: those tagged
// omitempty (the pool ids, unknown rather than empty).
func keepNil(sf reflect.StructField) bool {
	tag := sf.Tag.Get("json")
	return tag == "-" || strings.Contains(tag, ",omitempty")
}

// Normalize fills the map's lists (see fillLists); Parse, Merge and Write
// call it.
func (m *Map) Normalize() { fillLists(reflect.ValueOf(m)) }
