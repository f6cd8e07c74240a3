# Sourced by bootstrap.sh and setup-servers.sh: installs Debian packages the platform needs and the machine lacks
# (docker-compose, a JRE and Maven), as test/support/chromium.ts does for Chromium. Waits for dpkg's lock rather than
# failing on it. Fails, installing nothing, when not root or without apt-get; the caller says what that costs.
# apt_install LOG PACKAGE...: apt's output goes to LOG.
apt_install() {
  local out=$1
  shift
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"; } >"$out" 2>&1
}
