package capmap

// Lines is the line coverage of a map (version 2): the lines of project
// code that ran on the capturing thread while a stream captured, and those
// that ran in the replay-prep windows, by file in this checkout.
type Lines struct {
	// Captured and ReplayPrep map a local path (as Resolver.Local gives it)
	// to its executed lines, over every graph.
	Captured, ReplayPrep map[string]map[int]bool
}

// HasLines reports whether the tracer recorded executed lines (a version 1
// map, or one whose tracer could not, has none).
func (m *Map) HasLines() bool {
	if m.Tool.Lines != nil && (*m.Tool.Lines == "sys.monitoring" || *m.Tool.Lines == "settrace") {
		return true
	}
	for _, g := range m.Graphs {
		if len(g.Lines) > 0 {
			return true
		}
	}
	return false
}

// Coverage resolves the map's executed lines against the working directory
// dir; lines of files outside the project are left out. Nil when the map
// has no line coverage.
func (m *Map) Coverage(dir string) *Lines {
	if !m.HasLines() {
		return nil
	}
	r := m.NewResolver(dir)
	out := &Lines{Captured: map[string]map[int]bool{}, ReplayPrep: map[string]map[int]bool{}}
	add := func(dst map[string]map[int]bool, src map[string][][2]int) {
		for path, rs := range src {
			local := r.Local(path)
			if local == "" {
				continue
			}
			set := dst[local]
			if set == nil {
				set = map[int]bool{}
				dst[local] = set
			}
			for _, rg := range rs {
				for l := rg[0]; l <= rg[1] && l-rg[0] < 1<<20; l++ {
					set[l] = true
				}
			}
		}
	}
	for _, g := range m.Graphs {
		add(out.Captured, g.Lines)
		add(out.ReplayPrep, g.PrepLines)
	}
	return out
}

// Ran reports whether any line of first..last of path ran in ctx (Captured
// or ReplayPrep).
func (l *Lines) Ran(ctx, path string, first, last int) bool {
	set := l.Captured[path]
	if ctx == ReplayPrep {
		set = l.ReplayPrep[path]
	}
	for n := first; n <= last; n++ {
		if set[n] {
			return true
		}
	}
	return false
}
