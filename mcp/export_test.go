package mcp

// PID returns the process ID of a stdio server's current process, or 0.
func PID(s *Source) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.proc == nil || s.sess.proc.cmd.Process == nil {
		return 0
	}
	return s.sess.proc.cmd.Process.Pid
}
