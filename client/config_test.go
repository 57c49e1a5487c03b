package client

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const secret = "s3cret-token-value"

func TestParseHeader(t *testing.T) {
	n, v, err := ParseHeader("Authorization: Bearer " + secret)
	if err != nil || n != "Authorization" || v != "Bearer "+secret {
		t.Errorf("ParseHeader = %q, %q, %v", n, v, err)
	}
	n, v, err = ParseHeader("X-Empty:")
	if err != nil || n != "X-Empty" || v != "" {
		t.Errorf("ParseHeader(empty value) = %q, %q, %v", n, v, err)
	}
	for _, in := range []string{"Bearer " + secret, ": " + secret, "Bad Name: " + secret, "Bearer " + secret + ":x", "X: a\r\nInjected: " + secret} {
		_, _, err := ParseHeader(in)
		if err == nil {
			t.Errorf("ParseHeader(%q): no error", in)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error text leaks a header value: %v", err)
		}
	}
}

// TestHTTPClientHeader: Config.HTTPClient sends Header to the server's
// host, and is nil when there is nothing to add (the backend's default).
func TestHTTPClientHeader(t *testing.T) {
	if (Config{URL: "http://x/"}).HTTPClient() != nil {
		t.Error("no header, no client: want nil")
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("X-Proxy-Auth") }))
	defer srv.Close()
	hc := Config{URL: srv.URL + "/v1", Header: http.Header{"X-Proxy-Auth": {secret}}}.HTTPClient()
	resp, err := hc.Get(srv.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := <-got; h != secret {
		t.Errorf("header %q", h)
	}
}
