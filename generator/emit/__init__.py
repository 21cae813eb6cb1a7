"""Stage 7-8: systemd units and environment files from templates, the atomic writer, and the Ansible playbook."""
