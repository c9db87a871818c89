// Package fakes starts vinsvc's recorded stand-in for its third-party
// upstream, vPIC, outside the tests: the same fake the tests use
// (internal/vpic/vpictest, answering with recorded vPIC answers), exported
// for make demo's devstack command, which cannot import internal packages.
// Nothing in the service imports it: no setting of vinsvc can start it.
package fakes

import "github.com/gatewayapis/vinsvc/internal/vpic/vpictest"

// VPIC is a running fake vPIC.
type VPIC struct{ s *vpictest.Server }

// StartVPIC starts a fake vPIC on a free loopback port. Every VIN is
// answered: the recorded ones (RecordedVINs) with their recorded answers,
// the others with vPIC's answer for a VIN it cannot decode.
func StartVPIC() *VPIC { return &VPIC{s: vpictest.Start()} }

// BaseURL is the value for vinsvc's VPIC_BASE_URL.
func (v *VPIC) BaseURL() string { return v.s.BaseURL() }

// Calls is how many requests the fake has answered.
func (v *VPIC) Calls() int { return v.s.CallCount() }

// Close stops the fake.
func (v *VPIC) Close() { v.s.Close() }

// RecordedVINs are the VINs with recorded vPIC answers.
func RecordedVINs() []string {
	return []string{vpictest.VINFordF150, vpictest.VINHondaAccord, vpictest.VINVWTiguan,
		vpictest.VINHyundaiIoniq, vpictest.VINBMWCheckDigit}
}
