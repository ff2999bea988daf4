package chaos

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/oracle"
)

// The fenced resource service is a process of its own. Clients connect to
// it over a Unix socket and send one line per use of a resource:
//
//	hello <client> <pid>           -> ok
//	use <resource> <token>         -> ok | stale <why>
//	acquire <resource> <token>     -> ok
//	release <resource>             -> ok
//
// Clients of most workloads record their own holdings; acquire and release
// let a process that cannot (a command run by the zkcoord binary, in the
// cli workload) have the service record them: an Acquire event when it
// starts using a resource, a Release event when it says it stopped or,
// failing that, when its connection closes, which is when the process is
// gone.
//
// It accepts a use unless the token is older than the newest it has seen
// for that resource (or equal to it but from another client), as a real
// resource that honours fencing tokens would (oracle.Fenced). Every
// decision is written as an oracle event line (Use or Reject) on its
// standard output, stamped with event.Now while the decision is made, so
// the history orders uses as the resource saw them. It also prints
// "hello <client> <pid>" when a client connects and "closed <client> <pid>"
// once that connection has ended and every request read from it has been
// decided: the harness waits for that line after killing a client, so that
// no use sent by a dead process can be decided after its recorded crash.
// It stops when its standard input ends, printing "summary uses=N
// rejects=M".

// fencedService decides uses. It is safe for concurrent use.
type fencedService struct {
	out io.Writer // event and status lines; each written with one Write

	mu      sync.Mutex // orders decisions, their stamps and their lines
	fenced  *oracle.Fenced
	uses    int
	rejects int
}

func newFencedService(out io.Writer) *fencedService {
	return &fencedService{out: out, fenced: oracle.NewFenced(nil)}
}

// use decides one use and records it.
func (s *fencedService) use(client, resource string, token int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.fenced.Use(resource, client, token)
	e := event.Event{At: event.Now(), Client: client, Kind: event.Use, Resource: resource, Token: token}
	if err != nil {
		e.Kind, e.Detail = event.Reject, err.Error()
		s.rejects++
	} else {
		s.uses++
	}
	s.line(e.Line())
	return err
}

// event records e, stamped now.
func (s *fencedService) event(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.At = event.Now()
	s.line(e.Line())
}

func (s *fencedService) line(l string) { io.WriteString(s.out, l+"\n") }

func (s *fencedService) status(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line(fmt.Sprintf(format, args...))
}

// serve answers the requests of one connection, in order.
func (s *fencedService) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var client, pid string
	held := map[string]int64{} // acquired, not yet released: resource -> token
	defer func() {
		for r, token := range held {
			s.event(event.Event{Client: client, Kind: event.Release, Resource: r, Token: token,
				Detail: "connection closed"})
		}
		if client != "" {
			s.status("closed %s %s", client, pid)
		}
	}()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		var reply string
		switch {
		case len(f) == 3 && f[0] == "hello" && client == "":
			client, pid = f[1], f[2]
			s.status("hello %s %s", client, pid)
			reply = "ok"
		case len(f) == 3 && f[0] == "use" && client != "":
			token, perr := strconv.ParseInt(f[2], 10, 64)
			if perr != nil {
				reply = "error bad token"
				break
			}
			if err := s.use(client, f[1], token); err != nil {
				reply = "stale " + strings.ReplaceAll(err.Error(), "\n", " ")
			} else {
				reply = "ok"
			}
		case len(f) == 3 && f[0] == "acquire" && client != "":
			token, perr := strconv.ParseInt(f[2], 10, 64)
			if _, ok := held[f[1]]; perr != nil || ok {
				reply = "error bad acquire"
				break
			}
			held[f[1]] = token
			s.event(event.Event{Client: client, Kind: event.Acquire, Resource: f[1], Token: token})
			reply = "ok"
		case len(f) == 2 && f[0] == "release" && client != "":
			token, ok := held[f[1]]
			if !ok {
				reply = "error not held"
				break
			}
			delete(held, f[1])
			s.event(event.Event{Client: client, Kind: event.Release, Resource: f[1], Token: token})
			reply = "ok"
		default:
			reply = "error bad request"
		}
		if _, err := io.WriteString(c, reply+"\n"); err != nil {
			return
		}
	}
}

// serviceMain is the service process: "service -socket PATH".
func serviceMain(args []string) int {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	socket := fs.String("socket", "", "Unix socket to listen on")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ln, err := net.Listen("unix", *socket)
	if err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		return 1
	}
	svc := newFencedService(os.Stdout)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		ln.Close()
	}()
	svc.status("ready")
	var wg sync.WaitGroup
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc.serve(c)
		}()
	}
	// Connections of live clients stay open; the harness stops the service
	// after every client has gone, so there is nothing left to wait for.
	svc.mu.Lock()
	svc.line(fmt.Sprintf("summary uses=%d rejects=%d", svc.uses, svc.rejects))
	svc.mu.Unlock()
	return 0
}

// errStale is returned by serviceConn.use when the service refused a use.
var errStale = errors.New("chaos: use refused: stale fencing token")

// serviceConn is a client's connection to the service. It is safe for
// concurrent use; requests are sent one at a time.
type serviceConn struct {
	mu sync.Mutex
	c  net.Conn
	r  *bufio.Reader
}

func dialService(socket, client string) (*serviceConn, error) {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("chaos: service: %w", err)
	}
	s := &serviceConn{c: c, r: bufio.NewReader(c)}
	if _, err := s.request(fmt.Sprintf("hello %s %d", client, os.Getpid())); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

func (s *serviceConn) request(req string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.c, req+"\n"); err != nil {
		return "", fmt.Errorf("chaos: service: %w", err)
	}
	reply, err := s.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("chaos: service: %w", err)
	}
	reply = strings.TrimSuffix(reply, "\n")
	if strings.HasPrefix(reply, "error") {
		return "", fmt.Errorf("chaos: service: %s", reply)
	}
	return reply, nil
}

// use asks the service to use resource with token. It returns an error
// wrapping errStale if the service refused.
func (s *serviceConn) use(resource string, token int64) error {
	reply, err := s.request(fmt.Sprintf("use %s %d", resource, token))
	if err != nil {
		return err
	}
	if reply != "ok" {
		return fmt.Errorf("%w: %s", errStale, reply)
	}
	return nil
}

// acquire has the service record that this process started using
// resource with token.
func (s *serviceConn) acquire(resource string, token int64) error {
	_, err := s.request(fmt.Sprintf("acquire %s %d", resource, token))
	return err
}

// release has the service record that this process stopped using
// resource.
func (s *serviceConn) release(resource string) error {
	_, err := s.request("release " + resource)
	return err
}

func (s *serviceConn) close() { s.c.Close() }
