package patent

// ParsePatentID accepts a publication id such as US11734097B1:
// ^[A-Z]{2}[A-Z0-9]{1,20}$ (decisions.md). The id is used in storage keys,
// so nothing else is ever accepted.
func ParsePatentID(s string) (string, error) {
	ok := len(s) >= 3 && len(s) <= 22
	for i := 0; ok && i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i >= 2:
		default:
			ok = false
		}
	}
	if !ok {
		return "", Invalidf("patent id must be a publication number such as US11734097B1 (two letters, then 1 to 20 letters or digits)")
	}
	return s, nil
}
