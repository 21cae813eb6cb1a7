"""Live tests: rendered units checked on a real systemd host booted in a container."""
