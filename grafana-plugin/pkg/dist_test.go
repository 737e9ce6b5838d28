package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// root is the plugin's directory, dist where `make plugin` builds it.
const (
	root = ".."
	dist = "../dist"
)

// TestDist checks the plugin that `make plugin` built into dist/, as the
// plugin validator and Grafana read it: go_plugin_build_manifest lists
// every Go source file with its current sha256, LICENSE, CHANGELOG.md and
// the catalog README are there, plugin.json's executable names the
// binaries, one of them for this machine. Without dist/ it skips, unless
// MCPDRIFT_REQUIRE_PLUGIN_DIST is set (make test-plugin builds dist/ first
// and sets it).
func TestDist(t *testing.T) {
	if _, err := os.Stat(filepath.Join(dist, "plugin.json")); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_PLUGIN_DIST") != "" {
			t.Fatalf("no built plugin: %v; run make plugin", err)
		}
		t.Skipf("no built plugin (%v): run make plugin", err)
	}

	t.Run("manifest", func(t *testing.T) {
		listed := readManifest(t)
		sources := goSources(t)
		for path, sum := range sources {
			switch got, ok := listed[path]; {
			case !ok:
				t.Errorf("%s is not in the manifest", path)
			case got != sum:
				t.Errorf("%s: manifest sha256 %s, file %s (rebuild with make plugin)", path, got, sum)
			}
		}
		for path := range listed {
			if _, ok := sources[path]; !ok {
				t.Errorf("the manifest lists %s, which is not a Go source file of the plugin", path)
			}
		}
	})

	var manifest struct {
		Backend      bool                     `json:"backend"`
		Executable   string                   `json:"executable"`
		Info         struct{ Version string } `json:"info"`
		Dependencies struct {
			GrafanaDependency string `json:"grafanaDependency"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dist, "plugin.json")), &manifest); err != nil {
		t.Fatalf("dist/plugin.json: %v", err)
	}
	var pkg struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(root, "package.json")), &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}

	t.Run("plugin.json", func(t *testing.T) {
		if !manifest.Backend || manifest.Executable == "" {
			t.Errorf("backend %v, executable %q: want a backend plugin with an executable", manifest.Backend, manifest.Executable)
		}
		if manifest.Info.Version != pkg.Version {
			t.Errorf("info.version %q, package.json version %q", manifest.Info.Version, pkg.Version)
		}
		// grafanaDependency states the version the frontend is built and
		// tested against.
		if want := ">=" + pkg.Dependencies["@grafana/data"]; manifest.Dependencies.GrafanaDependency != want {
			t.Errorf("grafanaDependency %q, want %q (the @grafana/data of package.json)", manifest.Dependencies.GrafanaDependency, want)
		}
	})

	t.Run("executables", func(t *testing.T) {
		name := regexp.MustCompile(`^` + regexp.QuoteMeta(manifest.Executable) + `_(linux|darwin|windows)_(amd64|arm64|arm)(\.exe)?$`)
		entries, err := os.ReadDir(dist)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, e := range entries {
			n := e.Name()
			if !strings.HasPrefix(n, "gpx_") {
				continue
			}
			m := name.FindStringSubmatch(n)
			if m == nil {
				t.Errorf("dist/%s does not match plugin.json's executable %q as <executable>_<os>_<arch>[.exe]", n, manifest.Executable)
				continue
			}
			if (m[1] == "windows") != (m[3] == ".exe") {
				t.Errorf("dist/%s: .exe goes with windows and only with it", n)
			}
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode()&0o111 == 0 || info.Size() == 0 {
				t.Errorf("dist/%s: mode %v, %d bytes; want a non-empty executable", n, info.Mode(), info.Size())
			}
			found[m[1]+"/"+m[2]] = true
		}
		if host := runtime.GOOS + "/" + runtime.GOARCH; !found[host] {
			t.Errorf("no executable for %s among %v", host, found)
		}
	})

	t.Run("LICENSE, CHANGELOG, README", func(t *testing.T) {
		license := read(t, filepath.Join(dist, "LICENSE"))
		if !bytes.Equal(license, read(t, filepath.Join(root, "LICENSE"))) ||
			!bytes.Contains(license, []byte("Apache License")) || !bytes.Contains(license, []byte("Version 2.0, January 2004")) {
			t.Error("dist/LICENSE is not the plugin's Apache-2.0 LICENSE")
		}
		changelog := string(read(t, filepath.Join(dist, "CHANGELOG.md")))
		if !strings.Contains(changelog, "## "+pkg.Version) {
			t.Errorf("dist/CHANGELOG.md has no entry for version %s", pkg.Version)
		}
		readme := string(read(t, filepath.Join(dist, "README.md")))
		if !strings.HasPrefix(readme, "# mcpdrift data source") || strings.Contains(readme, "%VERSION%") ||
			!strings.Contains(readme, "Version "+pkg.Version) {
			t.Error("dist/README.md is not src/README.md with its version filled in")
		}
	})
}

// readManifest parses go_plugin_build_manifest: one "sha256:path" a line.
func readManifest(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(read(t, filepath.Join(dist, "go_plugin_build_manifest"))))
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), ":")
		if !ok || len(sum) != 64 {
			t.Fatalf("manifest line %q is not sha256:path", sc.Text())
		}
		out[path] = sum
	}
	if len(out) == 0 {
		t.Fatal("the manifest lists no file")
	}
	return out
}

// goSources hashes the plugin's Go files, by slash path from its root,
// node_modules and dist aside.
func goSources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (rel == "node_modules" || rel == "dist") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			sum := sha256.Sum256(read(t, path))
			out[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
