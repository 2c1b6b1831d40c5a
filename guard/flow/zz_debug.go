package flow

import (
	"fmt"
	"os"
	"strings"
)

func (s *solver) debugNode() {
	pat := os.Getenv("CAPGUARD_DEBUGNODE")
	if pat == "" {
		return
	}
	rev := map[int32]string{}
	for k, v := range s.names {
		rev[v] = k
	}
	name := map[NID]string{}
	for k, n := range s.locals {
		name[n] = "local " + k.fn.FullName() + "." + k.name
	}
	for f, ns := range s.params {
		for i, n := range ns {
			name[n] = fmt.Sprintf("param%d %s", i, f.FullName())
		}
	}
	for k, n := range s.fields {
		name[n] = "field " + s.describe(VID(uint32(k>>32))) + " ." + rev[int32(uint32(k))]
	}
	for n, nm := range name {
		if strings.Contains(nm, pat) {
			var out []string
			s.nodes.at(n).pts.each(func(v VID, st uint8) { out = append(out, fmt.Sprintf("%d:%s", st, s.describe(v))) })
			fmt.Fprintf(os.Stderr, "NODE %s mixed=%v = %v\n", nm, s.nodes.at(n).mixed, out)
		}
	}
}
