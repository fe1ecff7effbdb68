package instrument

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Debuginfod fetches debug files by build ID from debuginfod servers
// (GET URL/buildid/HEX/debuginfo) into a cache directory, where later
// runs find them without asking.
type Debuginfod struct {
	URLs  []string // server base URLs, asked in order
	Cache string   // Cache/HEX/debuginfo, as libdebuginfod lays it out
	// Client does the requests; a client with a 30 s timeout when nil.
	Client *http.Client
}

// errNotOnServers: no server has the debug file, the usual answer for a
// module without one, said by nobody.
var errNotOnServers = errors.New("no debuginfod server has it")

// debuginfodTimeout bounds one request: a server that hangs must not hold
// the traced program stopped for long.
const debuginfodTimeout = 30 * time.Second

// NewDebuginfod returns a client of the servers in urls, a
// DEBUGINFOD_URLS value (space-separated), caching under cache; nil when
// urls names none.
func NewDebuginfod(urls, cache string) *Debuginfod {
	var list []string
	for _, u := range strings.Fields(urls) {
		list = append(list, strings.TrimRight(u, "/"))
	}
	if len(list) == 0 {
		return nil
	}
	return &Debuginfod{URLs: list, Cache: cache}
}

// Fetch returns the path of the debug file with build ID id, from the
// cache or downloaded into it, and the URL it came from (for the cache,
// the first server's).
func (c *Debuginfod) Fetch(id string) (path, url string, err error) {
	if id == "" || !isHex(id) {
		return "", "", fmt.Errorf("build id %q: not hex", id)
	}
	path = filepath.Join(c.Cache, id, "debuginfo")
	if _, err := os.Stat(path); err == nil {
		return path, c.URLs[0] + "/buildid/" + id + "/debuginfo", nil
	}
	var errs []error
	for _, base := range c.URLs {
		url = base + "/buildid/" + id + "/debuginfo"
		err := c.download(url, path)
		if err == nil {
			return path, url, nil
		}
		if !errors.Is(err, errNotOnServers) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return "", url, errNotOnServers
	}
	return "", url, errors.Join(errs...)
}

// download writes the body of a GET of url to path, whole or not at all.
func (c *Debuginfod) download(url, path string) error {
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: debuginfodTimeout}
	}
	resp, err := client.Get(url)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return errNotOnServers
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("debuginfod cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".debuginfo-*")
	if err != nil {
		return fmt.Errorf("debuginfod cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing is there
	_, err = io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("debuginfod cache: %w", err)
	}
	return nil
}
