package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// privatePaths are the routes that only the cluster may call: the probes
// and the metrics. Every other path of an OpenAPI document is public.
var privatePaths = []string{"/livez", "/readyz", "/metrics"}

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
		out = append(out, route{service: service, path: root + p, public: !slices.Contains(privatePaths, p)})
	}
	slices.SortFunc(out, func(a, b route) int { return strings.Compare(a.path, b.path) })
	return out
}

// elements splits a path into its '/'-separated elements, ignoring empty
// ones, as Kubernetes does for pathType Prefix.
func elements(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

// matchLen reports how specific rule p is for request path req: the number
// of rule elements, or -1 when p does not match req. An OpenAPI parameter
// element ("{company_name}") stands for any value, so a rule matches it
// only when the rule ends before it (Prefix): a literal rule element could
// match some values and not others, which is not a match for every request.
func matchLen(p networkingv1.HTTPIngressPath, req string) int {
	rule, path := elements(p.Path), elements(req)
	switch *p.PathType {
	case networkingv1.PathTypeExact: // the whole string, trailing slash included
		if p.Path == req && !slices.ContainsFunc(path, isParam) {
			return len(rule)
		}
	case networkingv1.PathTypePrefix:
		if len(rule) <= len(path) && slices.Equal(rule, path[:len(rule)]) {
			return len(rule)
		}
	}
	return -1
}

func isParam(e string) bool { return strings.HasPrefix(e, "{") && strings.HasSuffix(e, "}") }

// mayMatch reports whether rule p matches any request that route path req
// stands for; a parameter element matches any literal rule element.
func mayMatch(p networkingv1.HTTPIngressPath, req string) bool {
	rule, path := elements(p.Path), elements(req)
	if *p.PathType == networkingv1.PathTypeExact {
		// Literal elements, empty ones (a trailing slash) included.
		rule, path = strings.Split(p.Path, "/"), strings.Split(req, "/")
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

func TestIngressExample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("k8s", "examples", "*ingress*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no k8s/examples/*ingress*.yaml (%v)", err)
	}
	for _, b := range overlays(t) {
		for _, f := range files {
			t.Run(b.name+"/"+filepath.Base(f), func(t *testing.T) {
				var ing networkingv1.Ingress
				if err := yaml.UnmarshalStrict(mustRead(t, f), &ing); err != nil {
					t.Fatalf("does not decode strictly into networking.k8s.io/v1 Ingress: %v", err)
				}
				if ing.APIVersion != "networking.k8s.io/v1" || ing.Kind != "Ingress" {
					t.Fatalf("apiVersion/kind %s/%s, want networking.k8s.io/v1/Ingress", ing.APIVersion, ing.Kind)
				}
				if ing.Spec.DefaultBackend != nil {
					t.Errorf("defaultBackend sends every unmatched path, the private ones too, to a service")
				}
				checkBodySize(t, ing.Annotations)

				// Which service each Service name reaches in this overlay,
				// and its effective ROOT_PATH.
				ports := map[string][]string{} // Service name -> port names
				owner := map[string]string{}   // Service name -> service
				roots := map[string]string{}
				for _, svc := range services {
					w := workloadOf(t, b, svc)
					env := containerEnv(t, b, w.container(t))
					roots[svc] = strings.TrimRight(effective(settingsTable(t, svc), env, "ROOT_PATH"), "/")
					for _, s := range all[*corev1.Service](b) {
						if len(s.Spec.Selector) > 0 && s.Spec.Selector["app.kubernetes.io/name"] == svc {
							owner[s.Name] = svc
							for _, p := range s.Spec.Ports {
								ports[s.Name] = append(ports[s.Name], p.Name)
							}
						}
					}
				}

				var rules []networkingv1.HTTPIngressPath
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
						if !strings.HasPrefix(p.Path, "/") {
							t.Errorf("path %q does not start with /", p.Path)
							continue
						}
						s := p.Backend.Service
						if s == nil {
							t.Errorf("path %s: backend is not a Service", p.Path)
							continue
						}
						if _, ok := owner[s.Name]; !ok {
							t.Errorf("path %s: Service %s is not one of the services' Services in %s", p.Path, s.Name, b.name)
							continue
						}
						if s.Port.Name == "" || !slices.Contains(ports[s.Name], s.Port.Name) {
							t.Errorf("path %s: Service %s port %q (number %d), want one of its port names %v", p.Path, s.Name, s.Port.Name, s.Port.Number, ports[s.Name])
							continue
						}
						rules = append(rules, p)
					}
				}

				for _, svc := range services {
					for _, r := range openapiRoutes(t, svc, roots[svc]) {
						for _, p := range rules {
							if !mayMatch(p, r.path) {
								continue
							}
							switch to := owner[p.Backend.Service.Name]; {
							case !r.public:
								t.Errorf("private %s %s is reachable through %s %s", svc, r.path, *p.PathType, p.Path)
							case to != svc:
								// The two services' paths do not overlap
								// (/v1, ROOT_PATH), so no request of one
								// may reach the other.
								t.Errorf("%s %s %s sends some requests for %s %s to %s", *p.PathType, p.Path, p.Backend.Service.Name, svc, r.path, to)
							}
						}
						if !r.public {
							continue
						}
						// The most specific matching rule wins (Exact over
						// Prefix of the same length), as in Kubernetes.
						best, bestLen := -1, -1
						for i, p := range rules {
							n := matchLen(p, r.path)
							if n > bestLen || (n == bestLen && n >= 0 && *p.PathType == networkingv1.PathTypeExact) {
								best, bestLen = i, n
							}
						}
						if best < 0 {
							t.Errorf("public %s %s has no ingress rule", svc, r.path)
							continue
						}
						if got := owner[rules[best].Backend.Service.Name]; got != svc {
							t.Errorf("public %s %s is routed by %s %s to %s", svc, r.path, *rules[best].PathType, rules[best].Path, got)
						}
					}
				}
			})
		}
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
