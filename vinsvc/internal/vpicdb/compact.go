package vpicdb

import "slices"

// compact moves what the snapshot keeps into few large blocks. The driver
// allocates every value it reads separately, so the strings the snapshot
// keeps would otherwise sit scattered among the load's garbage and pin
// half-empty memory spans for the life of the process (about 25 MB).
func (s *snapshot) compact() {
	var p packer
	for i := range s.attrs {
		p.add(&s.attrs[i])
	}
	for i := range s.keys {
		p.add(&s.keys[i].text)
	}
	for _, w := range s.wmis {
		p.add(&w.wmi)
	}
	for _, parts := range s.engineParts {
		for i := range parts {
			p.add(&parts[i].attr)
		}
	}
	for t := range s.tables {
		p.addMap(s.tables, t)
	}
	p.done()
	s.linkNames()
	s.attrs, s.keys, s.masks = slices.Clone(s.attrs), slices.Clone(s.keys), slices.Clone(s.masks)
}

// packer copies strings into one block and points them at it.
type packer struct {
	buf    []byte
	ptrs   []*string
	offs   []int
	finish []func()
}

func (p *packer) add(sp *string) {
	p.ptrs = append(p.ptrs, sp)
	p.offs = append(p.offs, len(p.buf))
	p.buf = append(p.buf, *sp...)
}

// addMap packs the values of the table named t, rebuilding its map.
func (p *packer) addMap(tables map[string]map[int32]string, t string) {
	m := tables[t]
	keys := make([]int32, 0, len(m))
	vals := make([]string, 0, len(m))
	for k, v := range m {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	for i := range vals {
		p.add(&vals[i])
	}
	p.finish = append(p.finish, func() {
		packed := make(map[int32]string, len(keys))
		for i, k := range keys {
			packed[k] = vals[i]
		}
		tables[t] = packed
	})
}

func (p *packer) done() {
	block := string(p.buf)
	for i, sp := range p.ptrs {
		*sp = block[p.offs[i] : p.offs[i]+len(*sp)]
	}
	for _, f := range p.finish {
		f()
	}
}
