package reqbody_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
)

func TestSameSite(t *testing.T) {
	for _, c := range []struct {
		header http.Header
		marks  []string
		want   bool
	}{
		{http.Header{"Content-Type": {"application/json"}}, nil, true},
		{http.Header{"Content-Type": {"Application/JSON; charset=UTF-8"}}, nil, true},
		// What a cross-site form or a no-cors fetch sends.
		{http.Header{}, nil, false},
		{http.Header{"Content-Type": {"text/plain"}}, nil, false},
		{http.Header{"Content-Type": {"text/plain;charset=UTF-8"}}, []string{reqbody.RequestedWith}, false},
		{http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, nil, false},
		{http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, nil, false},
		{http.Header{"Content-Type": {"application/json; charset=latin1"}}, nil, false},
		// No body type, and a header no simple request carries.
		{http.Header{"X-Requested-With": {"fetch"}}, []string{reqbody.RequestedWith}, true},
		{http.Header{"X-Requested-With": {""}}, []string{reqbody.RequestedWith}, false},
		{http.Header{"X-Requested-With": {"fetch"}}, nil, false},
		{http.Header{"Idempotency-Key": {"k-1"}}, []string{"Idempotency-Key"}, true},
		{http.Header{"Idempotency-Key": {"k-1"}}, []string{reqbody.RequestedWith}, false},
		// A form's type with the mark: the body is a form, still refused.
		{http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Requested-With": {"x"}}, []string{reqbody.RequestedWith}, false},
	} {
		assert.Equal(t, c.want, reqbody.SameSite(c.header, c.marks...), "%v %v", c.header, c.marks)
	}
}
