package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// static holds the application: plain HTML, CSS and JavaScript modules written for Hoist,
// with no build step and nothing fetched from elsewhere.
//
//go:embed static
var static embed.FS

// assetsHandler serves the application's files. Every path that is not a file under
// /console/static/ gets index.html, which routes by the URL's fragment.
type assetsHandler struct {
	files fs.FS
	index []byte
}

func newAssets() http.Handler {
	files, _ := fs.Sub(static, "static")
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("console: index.html is not embedded: " + err.Error())
	}
	return &assetsHandler{files: files, index: index}
}

// ServeHTTP answers GET and HEAD for the application's files.
func (a *assetsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSONError(w, http.StatusMethodNotAllowed, "InvalidRequestException", "the console's pages are read with GET")
		return
	}
	setSecurityHeaders(w.Header())
	name, ok := strings.CutPrefix(r.URL.Path, Path+"/static/")
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(a.index)
		return
	}
	if _, err := fs.Stat(a.files, name); err != nil || name == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, a.files, name)
}

// setSecurityHeaders keeps the console's pages to their own scripts and out of frames.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}
