package vpicdb

import (
	"errors"
	"math/big"
	"strings"
)

// evalFormula evaluates a Conversion formula once #x# is replaced, such as
// "3.5 / 0.016387064", the way SQL Server does, where vPIC runs: decimal
// arithmetic whose result scale follows T-SQL's rules, printed with all
// its scale digits ("213.58310433156"). Anything it cannot evaluate gives
// "0", as vPIC stores when its dynamic SQL fails.
func evalFormula(expr string) string {
	p := &formulaParser{src: expr}
	v, err := p.expr()
	if err == nil && strings.TrimSpace(p.src[p.pos:]) != "" {
		err = errors.New("trailing input")
	}
	if err != nil {
		return "0"
	}
	return v.String()
}

// decimal is a T-SQL decimal(p, s): m / 10^s.
type decimal struct {
	m    *big.Int
	p, s int
}

const maxPrecision = 38

// fit caps the precision at 38, giving up scale down to 6 (T-SQL).
func fit(p, s int) (int, int) {
	if p <= maxPrecision {
		return p, s
	}
	return maxPrecision, min(s, max(maxPrecision-(p-s), 6))
}

var ten = big.NewInt(10)

func pow10(n int) *big.Int { return new(big.Int).Exp(ten, big.NewInt(int64(n)), nil) }

// rescale moves m from scale from to scale to, rounding half away from
// zero (round) or truncating.
func rescale(m *big.Int, from, to int, round bool) *big.Int {
	if to >= from {
		return new(big.Int).Mul(m, pow10(to-from))
	}
	d := pow10(from - to)
	q, r := new(big.Int).QuoRem(m, d, new(big.Int))
	if round && new(big.Int).Abs(new(big.Int).Mul(r, big.NewInt(2))).Cmp(d) >= 0 {
		q.Add(q, big.NewInt(int64(m.Sign())))
	}
	return q
}

func (a decimal) add(b decimal, sign int) decimal {
	s := max(a.s, b.s)
	p, fs := fit(max(a.p-a.s, b.p-b.s)+s+1, s)
	bm := rescale(b.m, b.s, s, false)
	if sign < 0 {
		bm.Neg(bm)
	}
	sum := new(big.Int).Add(rescale(a.m, a.s, s, false), bm)
	return decimal{rescale(sum, s, fs, true), p, fs}
}

func (a decimal) mul(b decimal) decimal {
	s := a.s + b.s
	p, fs := fit(a.p+b.p+1, s)
	return decimal{rescale(new(big.Int).Mul(a.m, b.m), s, fs, true), p, fs}
}

func (a decimal) div(b decimal) (decimal, error) {
	if b.m.Sign() == 0 {
		return decimal{}, errors.New("divide by zero")
	}
	s := max(6, a.s+b.p+1)
	p, fs := fit(a.p-a.s+b.s+s, s)
	// a/b * 10^fs = a.m * 10^(fs + b.s - a.s) / b.m, truncated.
	num, den := new(big.Int).Set(a.m), new(big.Int).Set(b.m)
	if shift := fs + b.s - a.s; shift >= 0 {
		num.Mul(num, pow10(shift))
	} else {
		den.Mul(den, pow10(-shift))
	}
	return decimal{num.Quo(num, den), p, fs}, nil
}

// String prints all scale digits, with "0." before a fraction.
func (a decimal) String() string {
	digits := new(big.Int).Abs(a.m).String()
	if len(digits) <= a.s {
		digits = strings.Repeat("0", a.s-len(digits)+1) + digits
	}
	out := digits
	if a.s > 0 {
		out = digits[:len(digits)-a.s] + "." + digits[len(digits)-a.s:]
	}
	if a.m.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// formulaParser reads + - * / ( ) over decimal literals.
type formulaParser struct {
	src string
	pos int
}

func (f *formulaParser) peek() byte {
	for f.pos < len(f.src) && f.src[f.pos] == ' ' {
		f.pos++
	}
	if f.pos < len(f.src) {
		return f.src[f.pos]
	}
	return 0
}

func (f *formulaParser) expr() (decimal, error) {
	a, err := f.term()
	for err == nil {
		op := f.peek()
		if op != '+' && op != '-' {
			break
		}
		f.pos++
		sign := 1
		if op == '-' {
			sign = -1
		}
		var b decimal
		if b, err = f.term(); err == nil {
			a = a.add(b, sign)
		}
	}
	return a, err
}

func (f *formulaParser) term() (decimal, error) {
	a, err := f.unary()
	for err == nil {
		op := f.peek()
		if op != '*' && op != '/' {
			break
		}
		f.pos++
		var b decimal
		if b, err = f.unary(); err != nil {
			break
		}
		if op == '*' {
			a = a.mul(b)
		} else {
			a, err = a.div(b)
		}
	}
	return a, err
}

func (f *formulaParser) unary() (decimal, error) {
	switch f.peek() {
	case '-':
		f.pos++
		a, err := f.unary()
		if err == nil {
			a.m = new(big.Int).Neg(a.m)
		}
		return a, err
	case '+':
		f.pos++
		return f.unary()
	case '(':
		f.pos++
		a, err := f.expr()
		if err == nil && f.peek() != ')' {
			err = errors.New("missing )")
		}
		f.pos++
		return a, err
	}
	return f.literal()
}

// literal reads a number: an integer is a T-SQL int (precision 10) when
// it fits one, else like a decimal literal, whose precision counts its
// digits but leading zeros and whose scale counts those after the point.
func (f *formulaParser) literal() (decimal, error) {
	start := f.pos
	for f.pos < len(f.src) && (f.src[f.pos] >= '0' && f.src[f.pos] <= '9' || f.src[f.pos] == '.') {
		f.pos++
	}
	text := f.src[start:f.pos]
	whole, frac, dot := strings.Cut(text, ".")
	if text == "" || text == "." || strings.Contains(frac, ".") {
		return decimal{}, errors.New("not a number")
	}
	m, _ := new(big.Int).SetString("0"+whole+frac, 10)
	p := max(len(strings.TrimLeft(whole, "0"))+len(frac), len(frac), 1)
	if !dot && m.IsInt64() && m.Int64() <= 1<<31-1 {
		p = 10
	}
	if p > maxPrecision {
		return decimal{}, errors.New("number too long")
	}
	return decimal{m, p, len(frac)}, nil
}
