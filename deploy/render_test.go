package deploy_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// services are the two services, by the app.kubernetes.io/name of their
// pods, the name of their container and of their image repository.
var services = []string{"vinsvc", "patentsvc"}

// repoRoot is the workspace root: the tests run in deploy/.
const repoRoot = ".."

// kinds maps apiVersion/kind to the k8s.io/api type a resource is decoded
// into. A kind missing here fails the render test: add it together with
// the checks it needs. Secret is here only so that a committed Secret gets
// its own failure (TestNoSecretsCommitted) rather than "unknown kind".
var kinds = map[string]func() any{
	"v1/Namespace":                           func() any { return new(corev1.Namespace) },
	"v1/ServiceAccount":                      func() any { return new(corev1.ServiceAccount) },
	"v1/ConfigMap":                           func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                              func() any { return new(corev1.Secret) },
	"v1/Service":                             func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                     func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                    func() any { return new(appsv1.StatefulSet) },
	"policy/v1/PodDisruptionBudget":          func() any { return new(policyv1.PodDisruptionBudget) },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"networking.k8s.io/v1/NetworkPolicy":     func() any { return new(networkingv1.NetworkPolicy) },
}

// build is one rendered kustomization: every resource decoded into its type.
type build struct {
	name string // "overlays/prod", "base/vinsvc"
	objs []any
}

// kustomizations lists the directories to render: every overlay, then every
// base (a base must build alone too).
func kustomizations(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, group := range []string{"overlays", "base"} {
		entries, err := os.ReadDir(filepath.Join("k8s", group))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, group+"/"+e.Name())
			}
		}
	}
	if !slices.Contains(dirs, "overlays/dev") || !slices.Contains(dirs, "overlays/prod") {
		t.Fatalf("kustomizations = %v, want overlays/dev and overlays/prod among them", dirs)
	}
	return dirs
}

// overlays renders every overlay.
func overlays(t *testing.T) []build {
	t.Helper()
	var out []build
	for _, dir := range kustomizations(t) {
		if strings.HasPrefix(dir, "overlays/") {
			out = append(out, mustRender(t, dir))
		}
	}
	return out
}

// mustRender runs kustomize on k8s/<dir> as `kubectl apply -k` would and
// decodes every resource strictly (unknown or duplicate fields fail).
func mustRender(t *testing.T, dir string) build {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	abs, err := filepath.Abs(filepath.Join("k8s", dir))
	if err != nil {
		t.Fatal(err)
	}
	resMap, err := k.Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b := build{name: dir}
	bad := false
	for _, r := range resMap.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatalf("%s: %s: %v", dir, r.CurId(), err)
		}
		key := r.GetApiVersion() + "/" + r.GetKind()
		newObj, ok := kinds[key]
		if !ok {
			t.Errorf("%s: %s %s: unknown kind %s; add its type and checks to the tests", dir, r.GetKind(), r.GetName(), key)
			bad = true
			continue
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict(y, obj); err != nil {
			t.Errorf("%s: %s %s does not decode strictly into %T: %v", dir, r.GetKind(), r.GetName(), obj, err)
			bad = true
			continue
		}
		b.objs = append(b.objs, obj)
	}
	if bad { // the checks below would report confusing follow-on errors
		t.FailNow()
	}
	return b
}

// all returns the build's objects of type T.
func all[T any](b build) []T {
	var out []T
	for _, o := range b.objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// workload is a service's pod template with the object that owns it.
type workload struct {
	service  string // vinsvc or patentsvc
	kind     string
	name     string
	replicas *int32
	pod      *corev1.PodTemplateSpec
	sts      *appsv1.StatefulSet // nil for a Deployment
	deploy   *appsv1.Deployment  // nil for a StatefulSet
}

// workloads returns the build's Deployments and StatefulSets.
func workloads(t *testing.T, b build) []workload {
	t.Helper()
	var out []workload
	for _, d := range all[*appsv1.Deployment](b) {
		out = append(out, workload{service: d.Spec.Template.Labels["app.kubernetes.io/name"], kind: "Deployment",
			name: d.Name, replicas: d.Spec.Replicas, pod: &d.Spec.Template, deploy: d})
	}
	for _, s := range all[*appsv1.StatefulSet](b) {
		out = append(out, workload{service: s.Spec.Template.Labels["app.kubernetes.io/name"], kind: "StatefulSet",
			name: s.Name, replicas: s.Spec.Replicas, pod: &s.Spec.Template, sts: s})
	}
	for _, w := range out {
		if !slices.Contains(services, w.service) {
			t.Errorf("%s: %s %s: pod label app.kubernetes.io/name = %q, want one of %v", b.name, w.kind, w.name, w.service, services)
		}
	}
	return out
}

// workloadOf returns the build's workload of service.
func workloadOf(t *testing.T, b build, service string) workload {
	t.Helper()
	ws := workloads(t, b)
	i := slices.IndexFunc(ws, func(w workload) bool { return w.service == service })
	if i < 0 {
		t.Fatalf("%s: no %s workload", b.name, service)
	}
	return ws[i]
}

// container returns the workload's container named after its service.
func (w workload) container(t *testing.T) *corev1.Container {
	t.Helper()
	for i := range w.pod.Spec.Containers {
		if c := &w.pod.Spec.Containers[i]; c.Name == w.service {
			return c
		}
	}
	t.Fatalf("%s %s: no container named %s", w.kind, w.name, w.service)
	return nil
}

// envVar is one environment variable as a container receives it.
type envVar struct {
	value     string                    // a literal or ConfigMap value
	secretRef *corev1.SecretKeySelector // set when the value comes from a Secret
	from      string                    // "env" or "ConfigMap <name>"
}

// containerEnv resolves a container's environment: ConfigMaps named by
// envFrom (which must be in the build), then env, which wins. Every name
// set twice is reported: one of the two values would be dead.
func containerEnv(t *testing.T, b build, c *corev1.Container) map[string]envVar {
	t.Helper()
	env := map[string]envVar{}
	cms := map[string]*corev1.ConfigMap{}
	for _, cm := range all[*corev1.ConfigMap](b) {
		cms[cm.Name] = cm
	}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, ok := cms[ef.ConfigMapRef.Name]
			if !ok {
				t.Errorf("%s: container %s: envFrom ConfigMap %s is not in the build", b.name, c.Name, ef.ConfigMapRef.Name)
				continue
			}
			if ef.Prefix != "" {
				t.Errorf("%s: container %s: envFrom prefix %q: the settings have no prefix", b.name, c.Name, ef.Prefix)
			}
			for k, v := range cm.Data {
				if prev, dup := env[k]; dup {
					t.Errorf("%s: container %s: %s set by %s and by ConfigMap %s", b.name, c.Name, k, prev.from, cm.Name)
				}
				env[k] = envVar{value: v, from: "ConfigMap " + cm.Name}
			}
			if len(cm.BinaryData) > 0 {
				t.Errorf("%s: ConfigMap %s: binaryData is not an environment", b.name, cm.Name)
			}
		case ef.SecretRef != nil:
			// Its keys are not in the repository, so nothing could check
			// them against the settings tables.
			t.Errorf("%s: container %s: envFrom Secret %s: name each key with secretKeyRef instead", b.name, c.Name, ef.SecretRef.Name)
		}
	}
	for _, e := range c.Env {
		if prev, dup := env[e.Name]; dup {
			t.Errorf("%s: container %s: %s set by env and by %s", b.name, c.Name, e.Name, prev.from)
		}
		v := envVar{value: e.Value, from: "env"}
		if e.ValueFrom != nil {
			if e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("%s: container %s: %s: only secretKeyRef is expected in valueFrom", b.name, c.Name, e.Name)
			}
			v.secretRef = e.ValueFrom.SecretKeyRef
		}
		env[e.Name] = v
	}
	return env
}

// setting is one row of a service's generated settings table.
type setting struct {
	name, def string
	secret    bool // the Secret column: never logged, taken from a Secret
}

var settingRow = regexp.MustCompile("^\\| `([A-Z0-9_]+)` \\| (.*?) \\| (yes|no) \\|")

// settingsTable parses docs/config/<service>.md, which the service's
// config package generates from the table Load walks and checks in its
// tests: the source of truth for which variables exist.
func settingsTable(t *testing.T, service string) map[string]setting {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "docs", "config", service+".md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]setting{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := settingRow.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		def := strings.TrimSpace(m[2])
		if strings.HasPrefix(def, "`") && strings.HasSuffix(def, "`") {
			def = strings.Trim(def, "`")
		} else {
			def = "" // "none" or "empty"
		}
		out[m[1]] = setting{name: m[1], def: def, secret: m[3] == "yes"}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"PORT", "SHUTDOWN_TIMEOUT", "APP_ENV"} {
		if _, ok := out[must]; !ok {
			t.Fatalf("docs/config/%s.md: no %s row; did the table format change?", service, must)
		}
	}
	return out
}

// effective is the value a service sees for a setting: the container's
// value, or the table's default when the container sets none.
func effective(table map[string]setting, env map[string]envVar, name string) string {
	if v, ok := env[name]; ok && v.secretRef == nil && strings.TrimSpace(v.value) != "" {
		return strings.TrimSpace(v.value)
	}
	return table[name].def
}

func TestRenderStrict(t *testing.T) {
	for _, dir := range kustomizations(t) {
		t.Run(dir, func(t *testing.T) {
			b := mustRender(t, dir)
			if len(b.objs) == 0 {
				t.Fatalf("%s renders no resources", dir)
			}
		})
	}
}
