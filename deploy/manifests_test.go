package deploy_test

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// runtimeUID is distroless's nonroot user, the USER of every image
// (patentsvc's Debian images use the same number).
const runtimeUID = 65532

// requiredSecrets are the secret settings (the Secret column of
// docs/config/<service>.md) every overlay must set; every other secret
// setting is wired from the service's Secret as optional, so an operator
// sets it (PROXY_SECRET_PREVIOUS while rotating, say) without editing a
// manifest. Secret settings may only come from a secretKeyRef.
var requiredSecrets = map[string][]string{
	"vinsvc": {"PROXY_SECRET"},
	// DATABASE_URL: SQLite is one process on a writable disk, not for
	// these pods.
	"patentsvc": {"DATABASE_URL", "JWT_SECRET"},
}

// requiredSecretsIn are secret settings required in one overlay only, on
// top of requiredSecrets. prod's vinsvc replicas keep one rate-limit budget
// per subscriber, one vPIC pace and one decode per VIN only through a
// shared Redis; elsewhere (the bases, dev) REDIS_URL stays optional, and
// each process runs on its own.
var requiredSecretsIn = map[string]map[string][]string{
	"overlays/prod": {"vinsvc": {"REDIS_URL"}},
}

// isRequiredSecret reports whether the secret setting name must be set for
// service in the kustomization dir.
func isRequiredSecret(dir, service, name string) bool {
	return slices.Contains(requiredSecrets[service], name) || slices.Contains(requiredSecretsIn[dir][service], name)
}

// awsSettings are read by the AWS SDK that patentsvc's S3 storage uses
// (config.LoadDefaultConfig, patentsvc/internal/storage/s3.go), not by
// patentsvc's own config table. They are allowed, and only, where
// STORAGE_BACKEND is s3. true: a credential, allowed only from a Secret.
var awsSettings = map[string]bool{
	"AWS_ACCESS_KEY_ID":                false,
	"AWS_SECRET_ACCESS_KEY":            true,
	"AWS_SESSION_TOKEN":                true,
	"AWS_REGION":                       false,
	"AWS_REQUEST_CHECKSUM_CALCULATION": false,
	"AWS_RESPONSE_CHECKSUM_VALIDATION": false,
}

// shutdownBudget is how long each service may take after SIGTERM, in
// multiples of SHUTDOWN_TIMEOUT plus a fixed part (cmd/*/main.go): both
// finish HTTP drain and background work within one SHUTDOWN_TIMEOUT of
// the signal (graceful.DrainContext), then close their stores, which the
// fixed part covers.
var shutdownBudget = map[string]struct {
	timeouts int
	fixed    time.Duration
}{
	"vinsvc":    {1, 5 * time.Second},
	"patentsvc": {1, 5 * time.Second},
}

func TestOverlaysHoldBothServices(t *testing.T) {
	for _, b := range overlays(t) {
		var got []string
		for _, w := range workloads(t, b) {
			got = append(got, w.service)
		}
		slices.Sort(got)
		if want := []string{"patentsvc", "vinsvc"}; !slices.Equal(got, want) {
			t.Errorf("%s: workloads %v, want one each of %v", b.name, got, want)
		}
		// One namespace per overlay, created by the overlay itself.
		nss := map[string]bool{}
		for _, o := range b.objs {
			if m, ok := o.(interface{ GetNamespace() string }); ok {
				if _, isNS := o.(*corev1.Namespace); !isNS {
					nss[m.GetNamespace()] = true
				}
			}
		}
		if len(nss) != 1 || nss[""] {
			t.Errorf("%s: namespaces %v, want exactly one, set", b.name, nss)
		}
		for ns := range nss {
			if !slices.ContainsFunc(all[*corev1.Namespace](b), func(n *corev1.Namespace) bool { return n.Name == ns }) {
				t.Errorf("%s: no Namespace %s in the overlay", b.name, ns)
			}
		}
	}
}

func TestEnvMatchesSettingsTables(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				table := settingsTable(t, w.service)
				for _, c := range append(slices.Clone(w.pod.Spec.InitContainers), w.pod.Spec.Containers...) {
					env := containerEnv(t, b, &c)
					s3 := effective(table, env, "STORAGE_BACKEND") == "s3"
					for name, v := range env {
						_, known := table[name]
						awsCredential, aws := awsSettings[name]
						switch {
						case known:
						case aws && w.service == "patentsvc" && s3:
							if awsCredential && v.secretRef == nil {
								t.Errorf("%s: %s is a credential; take it from a Secret", c.Name, name)
							}
						default:
							t.Errorf("%s: %s (from %s) is not in docs/config/%s.md", c.Name, name, v.from, w.service)
						}
					}
					if c.Name != w.service {
						continue
					}
					for _, name := range append(slices.Clone(requiredSecrets[w.service]), requiredSecretsIn[dir][w.service]...) {
						if !table[name].secret {
							t.Errorf("required secret %s is not a secret setting of docs/config/%s.md", name, w.service)
						}
					}
					for name, s := range table {
						if !s.secret {
							continue
						}
						required := isRequiredSecret(dir, w.service, name)
						v, ok := env[name]
						switch {
						case !ok && required:
							t.Errorf("%s: %s is required here and not set", c.Name, name)
						case !ok:
							t.Errorf("%s: secret setting %s is not wired; add an optional secretKeyRef", c.Name, name)
						case v.secretRef == nil:
							t.Errorf("%s: %s is a secret but comes from %s; use a secretKeyRef", c.Name, name, v.from)
						case required && v.secretRef.Optional != nil && *v.secretRef.Optional:
							t.Errorf("%s: %s is required but its secretKeyRef is optional", c.Name, name)
						}
					}
				}
			})
		}
	}
}

// portOf resolves a probe's or a Service's port against the container.
func portOf(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.Int {
		return p.IntVal, true
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func TestPortsAndProbes(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				table := settingsTable(t, w.service)
				c := w.container(t)
				env := containerEnv(t, b, c)
				port, err := strconv.Atoi(effective(table, env, "PORT"))
				if err != nil {
					t.Fatalf("PORT: %v", err)
				}
				if len(c.Ports) != 1 || c.Ports[0].ContainerPort != int32(port) || c.Ports[0].Name != "http" {
					t.Errorf("container ports %+v, want one named http on PORT %d", c.Ports, port)
				}
				root := effective(table, env, "ROOT_PATH")
				if root != "" && w.service != "patentsvc" {
					t.Errorf("ROOT_PATH %q set on %s, which has no such setting", root, w.service)
				}
				root = strings.TrimRight(root, "/")
				for _, p := range []struct {
					name  string
					probe *corev1.Probe
					paths []string
				}{
					{"liveness", c.LivenessProbe, []string{root + "/livez"}},
					{"readiness", c.ReadinessProbe, []string{root + "/readyz"}},
					{"startup", c.StartupProbe, []string{root + "/livez", root + "/readyz"}},
				} {
					if p.probe == nil {
						if p.name != "startup" {
							t.Errorf("no %s probe", p.name)
						}
						continue
					}
					g := p.probe.HTTPGet
					if g == nil {
						t.Errorf("%s probe is not httpGet (vinsvc's image has no shell, and an exec probe would fork one every period)", p.name)
						continue
					}
					if !slices.Contains(p.paths, g.Path) {
						t.Errorf("%s probe path %q, want one of %q (ROOT_PATH %q)", p.name, g.Path, p.paths, root)
					}
					if got, ok := portOf(c, g.Port); !ok || got != int32(port) {
						t.Errorf("%s probe port %s resolves to %d, want PORT %d", p.name, g.Port.String(), got, port)
					}
					if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
						t.Errorf("%s probe scheme %s, want HTTP", p.name, g.Scheme)
					}
					if p.probe.TimeoutSeconds > 0 && p.probe.TimeoutSeconds < 2 && p.name == "readiness" {
						t.Errorf("readiness timeout %ds: /readyz may take its 1s store check plus the request", p.probe.TimeoutSeconds)
					}
				}
				// Every Service that selects the pods reaches PORT.
				selected := 0
				for _, s := range all[*corev1.Service](b) {
					if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels)) || len(s.Spec.Selector) == 0 {
						continue
					}
					selected++
					for _, sp := range s.Spec.Ports {
						if got, ok := portOf(c, sp.TargetPort); !ok || got != int32(port) {
							t.Errorf("Service %s port %s: targetPort %s resolves to %d, want PORT %d", s.Name, sp.Name, sp.TargetPort.String(), got, port)
						}
						if sp.Port != int32(port) {
							t.Errorf("Service %s port %d, want the service's own port %d", s.Name, sp.Port, port)
						}
					}
				}
				if selected == 0 {
					t.Errorf("no Service selects the %s pods", w.service)
				}
			})
		}
	}
}

// imageRef is a container image reference.
var (
	tagged   = regexp.MustCompile(`^[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9._/-]+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digested = regexp.MustCompile(`^[a-z0-9.-]+(?::[0-9]+)?/[a-z0-9._/-]+(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?@sha256:[0-9a-f]{64}$`)
)

func TestImagesPinned(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			for _, c := range append(slices.Clone(w.pod.Spec.InitContainers), w.pod.Spec.Containers...) {
				img := c.Image
				if !tagged.MatchString(img) && !digested.MatchString(img) {
					t.Errorf("%s: %s: image %q is neither registry/repo:tag nor pinned by digest", dir, c.Name, img)
				}
				if strings.HasSuffix(strings.SplitN(img, "@", 2)[0], ":latest") {
					t.Errorf("%s: %s: image %q uses :latest", dir, c.Name, img)
				}
				if c.ImagePullPolicy == corev1.PullAlways {
					t.Errorf("%s: %s: imagePullPolicy Always with a pinned image", dir, c.Name)
				}
				if repo := strings.SplitN(strings.SplitN(img, "@", 2)[0], ":", 2)[0]; !strings.HasSuffix(repo, "/"+w.service) {
					t.Errorf("%s: %s: image %q is not the %s image", dir, c.Name, img, w.service)
				}
			}
		}
	}
	// prod pins both images in its kustomization (images:), so a release
	// edits one place.
	raw, err := os.ReadFile("k8s/overlays/prod/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k kusttypes.Kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("prod kustomization: %v", err)
	}
	prod := mustRender(t, "overlays/prod")
	for _, w := range workloads(t, prod) {
		img := w.container(t).Image
		i := slices.IndexFunc(k.Images, func(im kusttypes.Image) bool { return strings.HasSuffix(im.Name, "/"+w.service) })
		if i < 0 {
			t.Errorf("prod kustomization: no images: entry for %s", w.service)
			continue
		}
		im := k.Images[i]
		want := im.Name
		if im.NewName != "" {
			want = im.NewName
		}
		if im.NewTag != "" {
			want += ":" + im.NewTag
		}
		if im.Digest != "" {
			want += "@" + im.Digest
		}
		if im.NewTag == "" && im.Digest == "" || im.NewTag == "latest" {
			t.Errorf("prod images: entry %s sets neither a tag other than latest nor a digest", im.Name)
		}
		if img != want {
			t.Errorf("prod: %s image %q, want %q from the kustomization's images:", w.service, img, want)
		}
	}
}

func TestSecurityContext(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				ps := w.pod.Spec.SecurityContext
				switch {
				case ps == nil:
					t.Fatal("no pod securityContext")
				case ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot:
					t.Error("pod: runAsNonRoot is not true")
				case ps.RunAsUser == nil || *ps.RunAsUser != runtimeUID:
					t.Errorf("pod: runAsUser is not %d", runtimeUID)
				case ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
					t.Error("pod: seccompProfile is not RuntimeDefault")
				}
				if w.pod.Spec.AutomountServiceAccountToken == nil || *w.pod.Spec.AutomountServiceAccountToken {
					t.Error("pod: automountServiceAccountToken is not false (the services never call the API server)")
				}
				if w.pod.Spec.HostNetwork || w.pod.Spec.HostPID || w.pod.Spec.HostIPC {
					t.Error("pod: shares a host namespace")
				}
				for _, c := range append(slices.Clone(w.pod.Spec.InitContainers), w.pod.Spec.Containers...) {
					sc := c.SecurityContext
					if sc == nil {
						t.Errorf("%s: no securityContext", c.Name)
						continue
					}
					for what, ok := range map[string]bool{
						"runAsNonRoot true":                  sc.RunAsNonRoot != nil && *sc.RunAsNonRoot,
						fmt.Sprint("runAsUser ", runtimeUID): sc.RunAsUser != nil && *sc.RunAsUser == runtimeUID,
						"readOnlyRootFilesystem true":        sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
						"allowPrivilegeEscalation false":     sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
						"privileged not true":                sc.Privileged == nil || !*sc.Privileged,
						"capabilities drop ALL":              sc.Capabilities != nil && slices.Contains(sc.Capabilities.Drop, "ALL"),
						"no capabilities added":              sc.Capabilities == nil || len(sc.Capabilities.Add) == 0,
						"seccompProfile RuntimeDefault":      sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault,
					} {
						if !ok {
							t.Errorf("%s: securityContext lacks %s", c.Name, what)
						}
					}
				}
			})
		}
	}
}

func TestResources(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			for _, c := range append(slices.Clone(w.pod.Spec.InitContainers), w.pod.Spec.Containers...) {
				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					req, okReq := c.Resources.Requests[r]
					lim, okLim := c.Resources.Limits[r]
					if !okReq || !okLim || req.IsZero() || lim.IsZero() {
						t.Errorf("%s: %s: %s request and limit must both be set", dir, c.Name, r)
						continue
					}
					if req.Cmp(lim) > 0 {
						t.Errorf("%s: %s: %s request %s above limit %s", dir, c.Name, r, req.String(), lim.String())
					}
				}
			}
		}
	}
}

// preStopSleep is the preStop sleep of a container, 0 without one.
func preStopSleep(t *testing.T, c *corev1.Container) time.Duration {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return 0
	}
	h := c.Lifecycle.PreStop
	if h.Sleep == nil || h.Exec != nil || h.HTTPGet != nil || h.TCPSocket != nil {
		t.Errorf("%s: preStop must be a sleep action (vinsvc's image has no shell; the action needs none)", c.Name)
		return 0
	}
	return time.Duration(h.Sleep.Seconds) * time.Second
}

func TestTerminationGrace(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			table := settingsTable(t, w.service)
			c := w.container(t)
			timeout, err := time.ParseDuration(effective(table, containerEnv(t, b, c), "SHUTDOWN_TIMEOUT"))
			if err != nil {
				t.Fatalf("%s: %s: SHUTDOWN_TIMEOUT: %v", dir, w.service, err)
			}
			budget := shutdownBudget[w.service]
			need := preStopSleep(t, c) + time.Duration(budget.timeouts)*timeout + budget.fixed
			g := w.pod.Spec.TerminationGracePeriodSeconds
			if g == nil {
				t.Errorf("%s: %s: terminationGracePeriodSeconds not set (default 30s)", dir, w.service)
				continue
			}
			if grace := time.Duration(*g) * time.Second; grace <= need || grace <= timeout {
				t.Errorf("%s: %s: terminationGracePeriodSeconds %v, want more than preStop + shutdown = %v (SHUTDOWN_TIMEOUT %v)",
					dir, w.service, grace, need, timeout)
			}
		}
	}
}

// mountFor returns the volume mount whose path holds dir (absolute).
func mountFor(c *corev1.Container, dir string) (corev1.VolumeMount, bool) {
	var best corev1.VolumeMount
	found := false
	for _, m := range c.VolumeMounts {
		mp := path.Clean(m.MountPath)
		if (dir == mp || strings.HasPrefix(dir, mp+"/")) && len(mp) >= len(best.MountPath) {
			best, found = m, true
		}
	}
	return best, found
}

func TestWritablePaths(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				table := settingsTable(t, w.service)
				c := w.container(t)
				env := containerEnv(t, b, c)
				// Each writable path: the setting, and whether it is used.
				var paths []string
				switch w.service {
				case "vinsvc":
					paths = append(paths, path.Dir(effective(table, env, "CACHE_PATH")))
				case "patentsvc":
					if effective(table, env, "STORAGE_BACKEND") == "local" {
						paths = append(paths, effective(table, env, "STORAGE_DIR"))
					}
				}
				for _, p := range paths {
					if !path.IsAbs(p) {
						t.Errorf("writable path %q is relative: it would land in the image's working directory, on the read-only root", p)
						continue
					}
					m, ok := mountFor(c, path.Clean(p))
					if !ok {
						t.Errorf("%s is on the read-only root file system: mount a volume there", p)
						continue
					}
					if m.ReadOnly {
						t.Errorf("%s: volume %s is mounted read-only", p, m.Name)
					}
					if w.service == "vinsvc" && path.Clean(m.MountPath) != path.Clean(p) {
						t.Errorf("CACHE_PATH's directory %s, volume mounted at %s: want the cache file directly on the volume", p, m.MountPath)
					}
					if w.service == "vinsvc" {
						continue // checked against the claim templates below
					}
					vi := slices.IndexFunc(w.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
					if vi < 0 || (w.pod.Spec.Volumes[vi].EmptyDir == nil && w.pod.Spec.Volumes[vi].PersistentVolumeClaim == nil) {
						t.Errorf("%s: volume %s is not an emptyDir or a PersistentVolumeClaim", p, m.Name)
					}
				}
				if w.service != "vinsvc" {
					return
				}
				// vinsvc: one bbolt writer per file = one claim per pod.
				if w.sts == nil {
					t.Fatalf("vinsvc is a %s; want a StatefulSet with a volume claim per pod", w.kind)
				}
				if w.replicas == nil || *w.replicas < 1 {
					t.Errorf("StatefulSet replicas %v, want set and at least 1", w.replicas)
				}
				m, ok := mountFor(c, path.Dir(effective(table, env, "CACHE_PATH")))
				if !ok {
					return
				}
				if slices.ContainsFunc(w.pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
					t.Errorf("volume %s is a pod volume; it must come from volumeClaimTemplates", m.Name)
				}
				ti := slices.IndexFunc(w.sts.Spec.VolumeClaimTemplates, func(p corev1.PersistentVolumeClaim) bool { return p.Name == m.Name })
				if ti < 0 {
					t.Fatalf("CACHE_PATH's volume %s is not a volumeClaimTemplate", m.Name)
				}
				pvc := w.sts.Spec.VolumeClaimTemplates[ti]
				if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) &&
					!slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}) {
					t.Errorf("claim %s access modes %v, want ReadWriteOnce or ReadWriteOncePod", pvc.Name, pvc.Spec.AccessModes)
				}
				if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(resource.MustParse("100Mi")) < 0 {
					t.Errorf("claim %s requests %s of storage", pvc.Name, q.String())
				}
				if ps := w.pod.Spec.SecurityContext; ps == nil || ps.FSGroup == nil || *ps.FSGroup != runtimeUID {
					t.Errorf("pod fsGroup not %d: the claimed volume would not be writable by the runtime user", runtimeUID)
				}
				// Its headless Service.
				si := slices.IndexFunc(all[*corev1.Service](b), func(s *corev1.Service) bool { return s.Name == w.sts.Spec.ServiceName })
				if si < 0 {
					t.Fatalf("serviceName %q: no such Service", w.sts.Spec.ServiceName)
				}
				if s := all[*corev1.Service](b)[si]; s.Spec.ClusterIP != corev1.ClusterIPNone {
					t.Errorf("Service %s (the StatefulSet's serviceName) is not headless", s.Name)
				}
				if !slices.ContainsFunc(all[*corev1.Service](b), func(s *corev1.Service) bool {
					return s.Spec.ClusterIP != corev1.ClusterIPNone && (s.Spec.Type == "" || s.Spec.Type == corev1.ServiceTypeClusterIP) &&
						len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels))
				}) {
					t.Error("no ClusterIP Service for clients")
				}
			})
		}
	}
}

func TestDisruptionAndScaling(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				pdbs := 0
				for _, p := range all[*policyv1.PodDisruptionBudget](b) {
					sel, err := metav1LabelSelector(p)
					if err != nil {
						t.Errorf("PDB %s: %v", p.Name, err)
						continue
					}
					if sel.Matches(labels.Set(w.pod.Labels)) {
						pdbs++
						if p.Spec.MinAvailable != nil {
							t.Errorf("PDB %s uses minAvailable; maxUnavailable keeps one-replica overlays drainable", p.Name)
						}
					}
				}
				if pdbs != 1 {
					t.Errorf("%d PodDisruptionBudgets select the pods, want 1", pdbs)
				}
				if w.service != "patentsvc" {
					return
				}
				if w.deploy == nil {
					t.Fatalf("patentsvc is a %s, want a Deployment", w.kind)
				}
				if w.replicas != nil {
					t.Errorf("Deployment sets replicas %d: the HPA owns the count, and apply would reset it", *w.replicas)
				}
				var hpa *autoscalingv2.HorizontalPodAutoscaler
				for _, h := range all[*autoscalingv2.HorizontalPodAutoscaler](b) {
					if h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == w.name && h.Spec.ScaleTargetRef.APIVersion == "apps/v1" {
						hpa = h
					}
				}
				if hpa == nil {
					t.Fatal("no HorizontalPodAutoscaler targets the Deployment")
				}
				if !slices.ContainsFunc(hpa.Spec.Metrics, func(m autoscalingv2.MetricSpec) bool {
					return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
						m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil
				}) {
					t.Error("HPA has no CPU utilisation metric")
				}
				if _, ok := w.container(t).Resources.Requests[corev1.ResourceCPU]; !ok {
					t.Error("no CPU request: the HPA's utilisation has nothing to divide by")
				}
				minR := int32(1)
				if hpa.Spec.MinReplicas != nil {
					minR = *hpa.Spec.MinReplicas
				}
				if hpa.Spec.MaxReplicas < minR {
					t.Errorf("HPA max %d below min %d", hpa.Spec.MaxReplicas, minR)
				}
				if dir == "overlays/prod" && minR < 2 {
					t.Errorf("prod: HPA minReplicas %d, want at least 2", minR)
				}
				if dir == "overlays/prod" && hpa.Spec.MaxReplicas <= minR {
					t.Errorf("prod: HPA max %d leaves no room above min %d", hpa.Spec.MaxReplicas, minR)
				}
			})
		}
	}
}

func metav1LabelSelector(p *policyv1.PodDisruptionBudget) (labels.Selector, error) {
	if p.Spec.Selector == nil || len(p.Spec.Selector.MatchExpressions) > 0 {
		return nil, fmt.Errorf("selector must be matchLabels only")
	}
	return labels.SelectorFromSet(p.Spec.Selector.MatchLabels), nil
}

// hole is one egress port a NetworkPolicy opens.
type hole struct {
	proto corev1.Protocol
	port  int32
}

// networkPolicies is what each service's NetworkPolicy must allow, in every
// kustomization. ingressFrom nil: the callers are cluster-specific (vinsvc:
// the API gateway), so ingress may stay open, and an overlay that fences
// it must admit someone.
var networkPolicies = map[string]struct {
	ingressFrom []string // namespaces admitted on the service port
	egress      []hole
}{
	// DNS, vPIC (443) and Redis (6379, REDIS_URL).
	"vinsvc": {nil, []hole{{corev1.ProtocolUDP, 53}, {corev1.ProtocolTCP, 53}, {corev1.ProtocolTCP, 443}, {corev1.ProtocolTCP, 6379}}},
	// DNS, PostgreSQL and HTTPS (SerpApi, the LLM gateway, PDFs, S3).
	"patentsvc": {[]string{"ingress-nginx", "monitoring"}, []hole{{corev1.ProtocolUDP, 53}, {corev1.ProtocolTCP, 53}, {corev1.ProtocolTCP, 5432}, {corev1.ProtocolTCP, 443}}},
}

func TestNetworkPolicy(t *testing.T) {
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			want, ok := networkPolicies[w.service]
			if !ok {
				t.Fatalf("no NetworkPolicy expectations for %s", w.service)
			}
			t.Run(dir+"/"+w.service, func(t *testing.T) {
				table := settingsTable(t, w.service)
				c := w.container(t)
				port, _ := strconv.Atoi(effective(table, containerEnv(t, b, c), "PORT"))
				// Policies add up: what one of them allows is allowed.
				var nps []*networkingv1.NetworkPolicy
				for _, p := range all[*networkingv1.NetworkPolicy](b) {
					if len(p.Spec.PodSelector.MatchLabels) > 0 && labels.SelectorFromSet(p.Spec.PodSelector.MatchLabels).Matches(labels.Set(w.pod.Labels)) {
						nps = append(nps, p)
					}
				}
				if len(nps) == 0 {
					t.Fatalf("no NetworkPolicy selects the %s pods", w.service)
				}
				var types []networkingv1.PolicyType
				var fromNS []string
				ingressRules := 0
				open := map[hole]bool{}
				for _, np := range nps {
					types = append(types, np.Spec.PolicyTypes...)
					if len(np.Spec.PolicyTypes) == 0 {
						t.Errorf("NetworkPolicy %s: policyTypes not stated", np.Name)
					}
					ingressRules += len(np.Spec.Ingress)
					for _, r := range np.Spec.Ingress {
						if len(r.From) == 0 {
							t.Error("an ingress rule admits every source")
						}
						if len(r.Ports) == 0 {
							t.Error("an ingress rule admits every port")
						}
						for _, p := range r.Ports {
							if p.Port == nil {
								t.Error("an ingress port without a number")
								continue
							}
							if got, ok := portOf(c, *p.Port); !ok || got != int32(port) {
								t.Errorf("ingress port %s, want the service port %d", p.Port.String(), port)
							}
						}
						for _, f := range r.From {
							if f.IPBlock != nil || f.NamespaceSelector == nil {
								t.Errorf("ingress peer %+v: want a namespace selector", f)
								continue
							}
							fromNS = append(fromNS, f.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"])
						}
					}
					for _, r := range np.Spec.Egress {
						for _, p := range r.Ports {
							proto := corev1.ProtocolTCP
							if p.Protocol != nil {
								proto = *p.Protocol
							}
							if p.Port != nil && p.Port.Type == intstr.Int {
								open[hole{proto, p.Port.IntVal}] = true
							}
						}
						if len(r.Ports) == 0 {
							t.Error("an egress rule opens every port")
						}
					}
				}
				if !slices.Contains(types, networkingv1.PolicyTypeEgress) {
					t.Errorf("policyTypes %v, want Egress", types)
				}
				switch isolated := slices.Contains(types, networkingv1.PolicyTypeIngress); {
				case want.ingressFrom == nil && isolated && ingressRules == 0:
					t.Errorf("policyTypes %v isolate ingress and no rule admits anyone: %s's callers (cluster-specific) would be cut off", types, w.service)
				case want.ingressFrom != nil && !isolated:
					t.Errorf("policyTypes %v, want Ingress and Egress", types)
				}
				for _, ns := range want.ingressFrom {
					if !slices.Contains(fromNS, ns) {
						t.Errorf("ingress admits namespaces %v, want %s among them", fromNS, ns)
					}
				}
				for _, h := range want.egress {
					if !open[h] {
						t.Errorf("egress lacks %s/%d", h.proto, h.port)
					}
				}
			})
		}
	}
}

// TestRedis holds vinsvc's REDIS_URL to the overlays: prod's replicas take
// it from a Secret that must exist (one budget per subscriber and one vPIC
// pace for the cluster depend on it), dev runs without it (the Secret is
// optional there: one process on its own), and nowhere is it a literal (it
// may carry a password). The NetworkPolicy's 6379 is TestNetworkPolicy's.
func TestRedis(t *testing.T) {
	prefixes := map[string]string{}
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			if w.service != "vinsvc" {
				continue
			}
			table := settingsTable(t, w.service)
			env := containerEnv(t, b, w.container(t))
			v, ok := env["REDIS_URL"]
			switch {
			case !ok:
				t.Errorf("%s: REDIS_URL not wired", dir)
				continue
			case v.secretRef == nil:
				t.Errorf("%s: REDIS_URL comes from %s; it may carry a password: take it from a Secret", dir, v.from)
				continue
			}
			optional := v.secretRef.Optional != nil && *v.secretRef.Optional
			switch dir {
			case "overlays/prod":
				if optional {
					t.Errorf("prod: REDIS_URL from Secret %s key %s is optional; prod's replicas need it", v.secretRef.Name, v.secretRef.Key)
				}
			default:
				if !optional {
					t.Errorf("%s: REDIS_URL from Secret %s key %s is required; only prod needs Redis", dir, v.secretRef.Name, v.secretRef.Key)
				}
			}
			if d, err := time.ParseDuration(effective(table, env, "REDIS_TIMEOUT")); err != nil || d <= 0 || d > time.Second {
				t.Errorf("%s: REDIS_TIMEOUT %q: want a positive duration of at most 1s (every request may wait for it)", dir, effective(table, env, "REDIS_TIMEOUT"))
			}
			if strings.HasPrefix(dir, "overlays/") {
				prefixes[dir] = effective(table, env, "REDIS_KEY_PREFIX")
			}
		}
	}
	// Overlays that share one Redis must not share keys: dev's requests
	// would spend prod's subscribers' budgets.
	seen := map[string]string{}
	for dir, p := range prefixes {
		if p == "" {
			t.Errorf("%s: REDIS_KEY_PREFIX empty", dir)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s both use REDIS_KEY_PREFIX %q", dir, other, p)
		}
		seen[p] = dir
	}
}

func TestOverlaySettings(t *testing.T) {
	for _, b := range overlays(t) {
		for _, w := range workloads(t, b) {
			table := settingsTable(t, w.service)
			env := containerEnv(t, b, w.container(t))
			appEnv := effective(table, env, "APP_ENV")
			switch b.name {
			case "overlays/dev":
				if appEnv != "development" {
					t.Errorf("dev: %s APP_ENV %q, want development", w.service, appEnv)
				}
				if w.service == "patentsvc" && effective(table, env, "STORAGE_BACKEND") != "local" {
					t.Errorf("dev: patentsvc STORAGE_BACKEND %q, want local (no S3 in dev)", effective(table, env, "STORAGE_BACKEND"))
				}
			case "overlays/prod":
				if appEnv == "development" {
					t.Errorf("prod: %s APP_ENV development relaxes the secret rules", w.service)
				}
				if w.service == "patentsvc" {
					if effective(table, env, "STORAGE_BACKEND") != "s3" || effective(table, env, "S3_BUCKET") == "" {
						t.Errorf("prod: patentsvc STORAGE_BACKEND %q S3_BUCKET %q, want s3 and a bucket",
							effective(table, env, "STORAGE_BACKEND"), effective(table, env, "S3_BUCKET"))
					}
					if effective(table, env, "TRUSTED_PROXIES") == "" {
						t.Error("prod: patentsvc TRUSTED_PROXIES empty: behind the ingress every client would share the controller's address")
					}
				}
				if w.service == "vinsvc" && (w.replicas == nil || *w.replicas < 2) {
					t.Errorf("prod: vinsvc replicas %v, want at least 2", w.replicas)
				}
				if m := effective(table, env, "VPIC_SNAPSHOT_MODE"); w.service == "vinsvc" && m != "fallback" {
					t.Errorf("prod: vinsvc VPIC_SNAPSHOT_MODE %q, want fallback (vPIC first, the image's snapshot when it fails or is slow)", m)
				}
			}
		}
	}
	// dev is the smaller one.
	dev, prod := mustRender(t, "overlays/dev"), mustRender(t, "overlays/prod")
	for _, s := range services {
		dw, pw := workloadOf(t, dev, s), workloadOf(t, prod, s)
		dm, pm := dw.container(t).Resources.Limits.Memory(), pw.container(t).Resources.Limits.Memory()
		if dm.Cmp(*pm) >= 0 {
			t.Errorf("%s: dev memory limit %s not below prod's %s", s, dm.String(), pm.String())
		}
	}
}

// documentedSecret is one row of README.md's table of operator-made Secrets.
type documentedSecret struct {
	name, key string
	required  bool
}

var secretRow = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| (yes|no) \\|")

func readmeSecrets(t *testing.T) []documentedSecret {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []documentedSecret
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := secretRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, documentedSecret{m[1], m[2], m[3] == "yes"})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("README.md: no Secret table rows (| `name` | `KEY` | yes/no |)")
	}
	return out
}

// Real secrets are never committed: the manifests reference Secrets the
// operator creates, and README.md lists every one of them, by name, key and
// whether it is required, which this test holds to the manifests.
func TestNoSecretsCommitted(t *testing.T) {
	documented := readmeSecrets(t)
	used := map[documentedSecret]bool{}
	for _, dir := range kustomizations(t) {
		b := mustRender(t, dir)
		for _, s := range all[*corev1.Secret](b) {
			t.Errorf("%s: Secret %s is rendered: secrets are created out of band (README.md)", dir, s.Name)
		}
		for _, w := range workloads(t, b) {
			for _, v := range w.pod.Spec.Volumes {
				if v.Secret != nil {
					t.Errorf("%s: %s: secret volume %s: not expected, add it to the README table and the test", dir, w.service, v.Secret.SecretName)
				}
			}
			for _, c := range w.pod.Spec.Containers {
				for _, e := range c.Env {
					if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
						continue
					}
					r := e.ValueFrom.SecretKeyRef
					ref := documentedSecret{r.Name, r.Key, r.Optional == nil || !*r.Optional}
					if !slices.Contains(documented, ref) {
						t.Errorf("%s: %s: %s from Secret %s key %s (required %v) is not in README.md's Secret table", dir, w.service, e.Name, r.Name, r.Key, ref.required)
					}
					if r.Key != e.Name {
						t.Errorf("%s: %s: %s reads key %s: keep key and variable names equal", dir, w.service, e.Name, r.Key)
					}
					used[ref] = true
				}
			}
		}
	}
	for _, d := range documented {
		if !used[d] {
			t.Errorf("README.md documents Secret %s key %s (required %v), which no manifest uses", d.name, d.key, d.required)
		}
	}
}

// TestLabelsStayOffTemplates keeps the rendered manifests the same on every
// kustomize release: label transformers write to the objects only. With
// includeTemplates (or commonLabels), releases differ on whether a
// StatefulSet's volumeClaimTemplates get the labels too
// (kubernetes-sigs/kustomize#5389), and those are immutable, so an apply
// with another kubectl could be refused. Pod templates carry the objects'
// labels themselves.
func TestLabelsStayOffTemplates(t *testing.T) {
	for _, dir := range kustomizations(t) {
		raw := mustRead(t, filepath.Join("k8s", dir, "kustomization.yaml"))
		var k kusttypes.Kustomization
		if err := yaml.UnmarshalStrict(raw, &k); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		//lint:ignore SA1019 finding the deprecated field in use is the point
		if len(k.CommonLabels) > 0 {
			t.Errorf("%s: commonLabels writes to templates and selectors; use labels: without them", dir)
		}
		for _, l := range k.Labels {
			if l.IncludeTemplates || l.IncludeSelectors {
				t.Errorf("%s: labels %v: includeTemplates/includeSelectors must be false", dir, l.Pairs)
			}
		}
		b := mustRender(t, dir)
		for _, w := range workloads(t, b) {
			obj := w.pod.Labels
			var own map[string]string
			if w.sts != nil {
				own = w.sts.Labels
				for _, vct := range w.sts.Spec.VolumeClaimTemplates {
					if _, ok := vct.Labels["app.kubernetes.io/part-of"]; ok {
						t.Errorf("%s: StatefulSet %s: claim template %s got a transformer's label", dir, w.name, vct.Name)
					}
				}
			} else {
				own = w.deploy.Labels
			}
			for k, v := range own {
				if obj[k] != v {
					t.Errorf("%s: %s %s has label %s=%s, its pod template %q", dir, w.kind, w.name, k, v, obj[k])
				}
			}
		}
	}
}
