package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// privatePaths are the routes that only the cluster may call: the probes
// and the metrics of both services, and vinsvc's API reference (its "try
// it" needs the proxy secret, which subscribers never hold: docs/vinsvc.md,
// "The API reference"). Every other path of an OpenAPI document is public,
// patentsvc's API reference included.
var privatePaths = map[string][]string{
	"vinsvc":    {"/livez", "/readyz", "/metrics", "/docs", "/docs/{asset}", "/openapi.yaml"},
	"patentsvc": {"/livez", "/readyz", "/metrics"},
}

// bodyLimit is both services' request body limit (1 MiB): the ingress must
// let bigger bodies through so that the service answers 413 in its own
// error format instead of the controller's HTML page.
const bodyLimit = 1 << 20

// route is one path of a service's API, as the ingress sees it.
type route struct {
	service, path string
	public        bool
}

// openapiRoutes reads the path keys of docs/openapi/<service>.yaml and
// prefixes them with root (patentsvc's effective ROOT_PATH).
func openapiRoutes(t *testing.T, service, root string) []route {
	t.Helper()
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal(mustRead(t, filepath.Join(repoRoot, "docs", "openapi", service+".yaml")), &doc); err != nil {
		t.Fatalf("docs/openapi/%s.yaml: %v", service, err)
	}
	if len(doc.Paths) == 0 {
		t.Fatalf("docs/openapi/%s.yaml has no paths", service)
	}
	var out []route
	for p := range doc.Paths {
		out = append(out, route{service: service, path: root + p, public: !slices.Contains(privatePaths[service], p)})
	}
	slices.SortFunc(out, func(a, b route) int { return strings.Compare(a.path, b.path) })
	return out
}

// elements splits a path into its '/'-separated elements, ignoring empty
// ones, as Kubernetes does for pathType Prefix.
func elements(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

// entryRule is one path rule of an entry example (an Ingress path, an
// HTTPRoute match), in Kubernetes' matching terms.
type entryRule struct {
	exact   bool   // Exact: the whole path; otherwise Prefix, element-wise
	path    string // starts with "/"
	backend string // the Service's name
	port    string // the Service port: its name, or its number
}

func (r entryRule) String() string {
	return map[bool]string{true: "Exact", false: "Prefix"}[r.exact] + " " + r.path + " -> " + r.backend + ":" + r.port
}

// matchLen reports how specific rule r is for request path req: the number
// of rule elements, or -1 when r does not match req. An OpenAPI parameter
// element ("{company_name}") stands for any value, so a rule matches it
// only when the rule ends before it (Prefix): a literal rule element could
// match some values and not others, which is not a match for every request.
func matchLen(r entryRule, req string) int {
	rule, path := elements(r.path), elements(req)
	if r.exact { // the whole string, trailing slash included
		if r.path == req && !slices.ContainsFunc(path, isParam) {
			return len(rule)
		}
		return -1
	}
	if len(rule) <= len(path) && slices.Equal(rule, path[:len(rule)]) {
		return len(rule)
	}
	return -1
}

func isParam(e string) bool { return strings.HasPrefix(e, "{") && strings.HasSuffix(e, "}") }

// mayMatch reports whether rule r matches any request that route path req
// stands for; a parameter element matches any literal rule element.
func mayMatch(r entryRule, req string) bool {
	rule, path := elements(r.path), elements(req)
	if r.exact {
		// Literal elements, empty ones (a trailing slash) included.
		rule, path = strings.Split(r.path, "/"), strings.Split(req, "/")
		if len(rule) != len(path) {
			return false
		}
	}
	if len(rule) > len(path) {
		return false
	}
	for i, e := range rule {
		if e != path[i] && !isParam(path[i]) {
			return false
		}
	}
	return true
}

// example is one YAML document of k8s/examples.
type example struct {
	file string
	kind string // apiVersion/kind
	raw  []byte
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// examples reads every document of every file in k8s/examples.
func examples(t *testing.T) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("k8s", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no k8s/examples/*.yaml (%v)", err)
	}
	var out []example
	for _, f := range files {
		for _, doc := range docSeparator.Split(string(mustRead(t, f)), -1) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if tm.Kind == "" && strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			out = append(out, example{file: filepath.Base(f), kind: tm.APIVersion + "/" + tm.Kind, raw: []byte(doc)})
		}
	}
	return out
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// decodeExample decodes an example strictly into obj.
func decodeExample(t *testing.T, ex example, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(ex.raw, obj); err != nil {
		t.Fatalf("%s: does not decode strictly into %T: %v", ex.file, obj, err)
	}
}

// overlayFacts is what the examples are checked against in one overlay.
type overlayFacts struct {
	owner map[string]string // Service name -> service
	ports map[string][]corev1.ServicePort
	roots map[string]string            // service -> effective ROOT_PATH
	pods  map[string]map[string]string // service -> pod template labels
}

func factsOf(t *testing.T, b build) overlayFacts {
	t.Helper()
	f := overlayFacts{owner: map[string]string{}, ports: map[string][]corev1.ServicePort{}, roots: map[string]string{}, pods: map[string]map[string]string{}}
	for _, svc := range services {
		w := workloadOf(t, b, svc)
		env := containerEnv(t, b, w.container(t))
		f.roots[svc] = strings.TrimRight(effective(settingsTable(t, svc), env, "ROOT_PATH"), "/")
		f.pods[svc] = w.pod.Labels
		for _, s := range all[*corev1.Service](b) {
			if len(s.Spec.Selector) > 0 && s.Spec.Selector["app.kubernetes.io/name"] == svc {
				f.owner[s.Name] = svc
				f.ports[s.Name] = s.Spec.Ports
			}
		}
	}
	return f
}

// TestExamples checks every example against every overlay: the entries
// (Ingress, HTTPRoute) against the OpenAPI documents, the PodMonitors
// against the pods.
func TestExamples(t *testing.T) {
	exs := examples(t)
	for _, b := range overlays(t) {
		facts := factsOf(t, b)
		for _, ex := range exs {
			t.Run(b.name+"/"+ex.file+"/"+ex.kind, func(t *testing.T) {
				switch ex.kind {
				case "networking.k8s.io/v1/Ingress":
					var ing networkingv1.Ingress
					decodeExample(t, ex, &ing)
					checkEntry(t, facts, ingressRules(t, &ing))
				case "gateway.networking.k8s.io/v1/HTTPRoute":
					var route gatewayv1.HTTPRoute
					decodeExample(t, ex, &route)
					checkEntry(t, facts, httpRouteRules(t, &route))
				case "monitoring.coreos.com/v1/PodMonitor":
					var pm monitoringv1.PodMonitor
					decodeExample(t, ex, &pm)
					checkPodMonitor(t, b, facts, &pm)
				default:
					t.Fatalf("%s: kind %s has no checks here; add them", ex.file, ex.kind)
				}
			})
		}
	}
	// Each service has one entry of each kind and one PodMonitor: the
	// examples cover both services.
	kinds := map[string]int{}
	for _, ex := range exs {
		kinds[ex.kind]++
	}
	if kinds["monitoring.coreos.com/v1/PodMonitor"] != len(services) {
		t.Errorf("%d PodMonitors, want one per service", kinds["monitoring.coreos.com/v1/PodMonitor"])
	}
}

// ingressRules turns an Ingress into rules, checking what only Ingresses have.
func ingressRules(t *testing.T, ing *networkingv1.Ingress) []entryRule {
	t.Helper()
	if ing.Spec.DefaultBackend != nil {
		t.Errorf("defaultBackend sends every unmatched path, the private ones too, to a service")
	}
	checkBodySize(t, ing.Annotations)
	var rules []entryRule
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			t.Errorf("rule for host %q has no http paths", r.Host)
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.PathType == nil || (*p.PathType != networkingv1.PathTypeExact && *p.PathType != networkingv1.PathTypePrefix) {
				t.Errorf("path %s: pathType must be Exact or Prefix (ImplementationSpecific differs per controller)", p.Path)
				continue
			}
			s := p.Backend.Service
			if s == nil {
				t.Errorf("path %s: backend is not a Service", p.Path)
				continue
			}
			port := s.Port.Name
			if port == "" {
				port = strconv.Itoa(int(s.Port.Number))
			}
			rules = append(rules, entryRule{exact: *p.PathType == networkingv1.PathTypeExact, path: p.Path, backend: s.Name, port: port})
		}
	}
	return rules
}

// httpRouteRules turns an HTTPRoute into rules: path matches only (a
// header or method match would make a path's routing depend on more than
// the path), one Service backend per rule, no filters.
func httpRouteRules(t *testing.T, route *gatewayv1.HTTPRoute) []entryRule {
	t.Helper()
	if len(route.Spec.ParentRefs) == 0 {
		t.Error("no parentRefs: the route is attached to no Gateway")
	}
	var rules []entryRule
	for i, r := range route.Spec.Rules {
		if len(r.BackendRefs) != 1 {
			t.Errorf("rule %d: %d backendRefs, want one Service", i, len(r.BackendRefs))
			continue
		}
		if len(r.Filters) > 0 || len(r.BackendRefs[0].Filters) > 0 {
			t.Errorf("rule %d: filters rewrite what the services see", i)
		}
		ref := r.BackendRefs[0].BackendRef
		if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") || ref.Namespace != nil {
			t.Errorf("rule %d: backend %s is not a Service of this namespace", i, ref.Name)
			continue
		}
		if ref.Port == nil {
			t.Errorf("rule %d: backend %s has no port (required for a Service)", i, ref.Name)
			continue
		}
		if len(r.Matches) == 0 {
			t.Errorf("rule %d: no matches: it matches every path, the private ones too", i)
			continue
		}
		for _, m := range r.Matches {
			if len(m.Headers) > 0 || len(m.QueryParams) > 0 || m.Method != nil {
				t.Errorf("rule %d: match on more than the path", i)
			}
			if m.Path == nil || m.Path.Type == nil || m.Path.Value == nil {
				t.Errorf("rule %d: a match without an explicit path type and value (the default is every path)", i)
				continue
			}
			var exact bool
			switch *m.Path.Type {
			case gatewayv1.PathMatchExact:
				exact = true
			case gatewayv1.PathMatchPathPrefix:
			default:
				t.Errorf("rule %d: path type %s, want Exact or PathPrefix", i, *m.Path.Type)
				continue
			}
			rules = append(rules, entryRule{exact: exact, path: *m.Path.Value, backend: string(ref.Name), port: strconv.Itoa(int(*ref.Port))})
		}
	}
	return rules
}

// checkEntry checks an entry's rules against the overlay's Services and
// both OpenAPI documents: every public path reaches its own service by the
// most specific matching rule; no rule reaches a private path or the other
// service's paths.
func checkEntry(t *testing.T, facts overlayFacts, all []entryRule) {
	t.Helper()
	var rules []entryRule
	for _, r := range all {
		if !strings.HasPrefix(r.path, "/") {
			t.Errorf("%s: path does not start with /", r)
			continue
		}
		if _, ok := facts.owner[r.backend]; !ok {
			t.Errorf("%s: Service %s is not one of the services' Services", r, r.backend)
			continue
		}
		if !slices.ContainsFunc(facts.ports[r.backend], func(p corev1.ServicePort) bool {
			return p.Name == r.port || strconv.Itoa(int(p.Port)) == r.port
		}) {
			t.Errorf("%s: the Service has no such port (%v)", r, facts.ports[r.backend])
			continue
		}
		rules = append(rules, r)
	}
	for _, svc := range services {
		for _, route := range openapiRoutes(t, svc, facts.roots[svc]) {
			for _, r := range rules {
				if !mayMatch(r, route.path) {
					continue
				}
				switch to := facts.owner[r.backend]; {
				case !route.public:
					t.Errorf("private %s %s is reachable through %s", svc, route.path, r)
				case to != svc:
					// The two services' paths do not overlap (/v1,
					// ROOT_PATH), so no request of one may reach the other.
					t.Errorf("%s sends some requests for %s %s to %s", r, svc, route.path, to)
				}
			}
			if !route.public {
				continue
			}
			// The most specific matching rule wins, Exact over Prefix of
			// the same length (Ingress and Gateway API alike).
			best, bestLen := -1, -1
			for i, r := range rules {
				n := matchLen(r, route.path)
				if n > bestLen || (n == bestLen && n >= 0 && r.exact) {
					best, bestLen = i, n
				}
			}
			if best < 0 {
				t.Errorf("public %s %s has no rule", svc, route.path)
				continue
			}
			if got := facts.owner[rules[best].backend]; got != svc {
				t.Errorf("public %s %s is routed by %s to %s", svc, route.path, rules[best], got)
			}
		}
	}
}

// checkPodMonitor checks that a PodMonitor selects exactly one service's
// pods and scrapes their container port at the metrics route.
func checkPodMonitor(t *testing.T, b build, facts overlayFacts, pm *monitoringv1.PodMonitor) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() {
		t.Fatalf("PodMonitor %s: selector %v: %v (an empty one selects every pod)", pm.Name, pm.Spec.Selector, err)
	}
	var selected []string
	for _, svc := range services {
		if sel.Matches(labels.Set(facts.pods[svc])) {
			selected = append(selected, svc)
		}
	}
	if len(selected) != 1 {
		t.Fatalf("PodMonitor %s selects the pods of %v, want exactly one service", pm.Name, selected)
	}
	svc := selected[0]
	if ns := pm.Spec.NamespaceSelector; ns.Any || len(ns.MatchNames) > 0 {
		t.Errorf("PodMonitor %s: namespaceSelector %+v: leave it empty, the PodMonitor lives in the pods' namespace", pm.Name, ns)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("PodMonitor %s: %d endpoints, want one", pm.Name, len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	c := workloadOf(t, b, svc).container(t)
	if ep.Port == nil || !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == *ep.Port }) {
		t.Errorf("PodMonitor %s: port %v is not a named port of the %s container (%v)", pm.Name, ep.Port, svc, c.Ports)
	}
	if want := facts.roots[svc] + "/metrics"; ep.Path != want {
		t.Errorf("PodMonitor %s: path %q, want %q (ROOT_PATH + /metrics)", pm.Name, ep.Path, want)
	}
	if ep.Scheme != nil && strings.ToLower(string(*ep.Scheme)) != "http" {
		t.Errorf("PodMonitor %s: scheme %s, the services serve plain HTTP", pm.Name, *ep.Scheme)
	}
}

// checkBodySize requires the ingress-nginx body size annotation above the
// services' own limit (its default, 1m, would answer 413 in HTML first).
func checkBodySize(t *testing.T, ann map[string]string) {
	t.Helper()
	v, ok := ann["nginx.ingress.kubernetes.io/proxy-body-size"]
	if !ok {
		t.Errorf("no nginx.ingress.kubernetes.io/proxy-body-size: ingress-nginx's 1m default answers oversize bodies itself")
		return
	}
	// nginx sizes are bytes or "512k", "2m", "1g" (powers of 1024);
	// resource quantities spell those "512Ki", "2Mi", "1Gi". 0 = no limit.
	s := strings.ToUpper(strings.TrimSpace(v))
	if strings.HasSuffix(s, "K") || strings.HasSuffix(s, "M") || strings.HasSuffix(s, "G") {
		s += "i"
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Errorf("proxy-body-size %q: %v", v, err)
		return
	}
	if q.Value() != 0 && q.Value() <= bodyLimit {
		t.Errorf("proxy-body-size %q = %d bytes, want more than the services' %d", v, q.Value(), bodyLimit)
	}
}

// TestExamplesListed keeps deploy/README.md's list of examples true.
func TestExamplesListed(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("k8s", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(mustRead(t, "README.md"))
	for _, e := range entries {
		if !strings.Contains(readme, "examples/"+e.Name()) {
			t.Errorf("deploy/README.md does not mention k8s/examples/%s", e.Name())
		}
	}
}
