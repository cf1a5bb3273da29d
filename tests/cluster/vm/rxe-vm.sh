#!/usr/bin/env bash
# Run a command inside a small qemu VM that has a soft-RoCE device, rxe0.
#
#   rxe-vm.sh prepare [--force]
#   rxe-vm.sh run [OPTIONS] -- CMD [ARGS...]
#   rxe-vm.sh info
#
# prepare  Fetches Debian's stock kernel package (the one linux-image-amd64
#          depends on) with apt-get download, unpacks it with dpkg -x (nothing is
#          installed) and builds a busybox initramfs that loads virtio, 9p and
#          rdma_rxe. Kernel and initramfs are cached; see "Cache" below.
# run      Boots the kernel under qemu (software emulation: -accel tcg), mounts
#          this machine's root read-only, creates rxe0 on eth0 (10.0.2.15, RoCE v2)
#          and runs CMD in a chroot of this machine's root, in the same working
#          directory and with the same environment. CMD's stdout and stderr are
#          printed when the VM has powered off, and its exit status is returned.
#          Prepares first when nothing is cached.
# info     Prints the cache directory and the prepared kernel, if any.
#
# run options:
#   --timeout SEC         kill the VM after SEC seconds without progress: nothing new on
#                         its console, in CMD's output or in a --share directory (default
#                         300, GDRB_VM_TIMEOUT); a loaded host makes a run slow, not stuck
#   --max-time SEC        kill the VM after SEC seconds whatever it does (default 4 x
#                         --timeout)
#   --share DIR           make host directory DIR writable in the VM, at the same path
#                         (repeatable); everything else of the host is read-only there
#   --at SEC CMD          run shell command CMD inside the VM SEC seconds after CMD
#                         started (repeatable): fault injection
#   --link-down-after SEC same as --at SEC 'ip link set eth0 down': rxe0's port goes DOWN
#   --host-at SEC MCMD    send qemu monitor command MCMD from the host SEC seconds after
#                         CMD started (repeatable), e.g. 'set_link net0 off': the NIC
#                         loses its carrier, as when a cable is pulled (traffic between
#                         processes in the VM is looped back inside rxe and continues)
#   --mem MIB, --smp N    VM memory (default 2048) and virtual CPUs (default 2), each VM
#   --vms N               a cluster of N VMs (2 to 8; default 1), see "Cluster" below
#   --keep                keep the run directory (console log, outputs) and print it
#   -v, --verbose         print the VM's console log and the time it took to stderr
#
# Inside the VM: the host's /tmp, /run and /dev/shm are empty tmpfs, so binaries
# and files CMD reads must live elsewhere (a build tree, a --share directory).
# CMD's stdin is /dev/null. Files CMD writes must go to a --share directory.
# The VM reaches nothing outside itself (qemu user networking, restrict=on).
#
# Cluster (--vms N): VMs gdrb-vm1 .. gdrb-vmN, each with its own rxe0 on eth0 at
# 10.0.3.I/24, on one Ethernet segment: their qemu NICs (-netdev socket) connect over
# a local TCP socket to a hub on this machine (tests/cluster/vm/hub.py) that repeats every
# frame to the other VMs; nothing else is reachable. CMD runs in gdrb-vm1 once every
# other VM's remote shell (tests/cluster/vm/rsh.c, an ssh for Open MPI's plm_rsh_agent)
# answers; the others run only that server. CMD sees GDRB_VM_HOSTS (gdrb-vm1,...),
# GDRB_VM_RSH (the remote shell: $GDRB_VM_RSH HOST CMD...) and OMPI_MCA_* variables
# that make `mpirun --host gdrb-vm1,gdrb-vm2 ...` start its daemons through it, TCP
# on eth0. --at, --host-at and --link-down-after act on gdrb-vm1; to act on another VM
# use its remote shell (e.g. $GDRB_VM_RSH gdrb-vm3 tc qdisc add dev eth0 root netem
# delay 20ms). When CMD ends every VM is stopped.
#
# Exit status: CMD's, or 77 when the VM cannot be had here (no qemu, no static
# busybox, the kernel package cannot be fetched, the kernel has no rdma_rxe),
# 124 when the time limit killed the VM, 125 when the VM failed before CMD
# finished (its console log is printed), 2 on bad usage.
#
# Cache: $GDRB_VM_CACHE, else $XDG_CACHE_HOME/gdrbench/rxe-vm, else
# ~/.cache/gdrbench/rxe-vm. About 10 MB. GDRB_VM_KERNEL_DEB=FILE uses that
# kernel .deb instead of downloading one. GDRB_VM_QEMU names the qemu binary;
# GDRB_VM_ACCEL=kvm tries KVM instead of software emulation.
set -euo pipefail

prog=rxe-vm
# Bump when the initramfs layout changes: cached initramfs files are rebuilt.
initrd_format=4
# Modules the VM loads, each after its dependencies (the last five: tc degrades a link, netem
# its sends, an ingress police or gact (a random drop) its receives).
vm_modules=(crc32_generic virtio_pci 9pnet_virtio 9p virtio_net rdma_rxe ib_uverbs
	sch_netem sch_ingress cls_matchall act_police act_gact)
vm_ip=10.0.2.15
vm_hostname=gdrb-vm
# A cluster (--vms N): VM i is gdrb-vmI at $cluster_net.I on one Ethernet segment.
cluster_net=10.0.3
rsh_port=7070

log() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() {
	log "$*"
	exit 1
}
usage_error() {
	log "$* (see $0 --help)"
	exit 2
}
# The VM cannot be had on this machine: one line, exit 77 (SKIP for Automake).
unavailable() {
	log "no soft-RoCE VM here: $*"
	exit 77
}
usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
}

cache_dir=${GDRB_VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/gdrbench/rxe-vm}

# The kernel a complete cache holds, or nothing.
cached_kernel() {
	local kver
	kver=$(cat "$cache_dir/current" 2>/dev/null) || return 0
	if [[ -n $kver && -f $cache_dir/$kver/vmlinuz && -f $cache_dir/$kver/initrd.img &&
		$(cat "$cache_dir/$kver/format" 2>/dev/null) == "$initrd_format" ]]; then
		printf '%s\n' "$kver"
	fi
}

# The kernel package linux-image-amd64 depends on (never the -cloud flavour).
kernel_package() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-[0-9][^ ]*-amd64$/ && $2 !~ /cloud/ { print $2; exit }'
}

# Fetch the kernel .deb into DIR; print its path.
fetch_kernel_deb() {
	local dir=$1 pkg apt_opts=()
	if [[ -n ${GDRB_VM_KERNEL_DEB:-} ]]; then
		[[ -r $GDRB_VM_KERNEL_DEB ]] || unavailable "GDRB_VM_KERNEL_DEB=$GDRB_VM_KERNEL_DEB cannot be read"
		printf '%s\n' "$GDRB_VM_KERNEL_DEB"
		return 0
	fi
	if ! command -v apt-get >/dev/null 2>&1 || ! command -v apt-cache >/dev/null 2>&1; then
		unavailable "no apt-get to fetch Debian's kernel package (or set GDRB_VM_KERNEL_DEB)"
	fi
	pkg=$(kernel_package)
	if [[ -z $pkg && $(id -u) -eq 0 ]]; then
		log "apt-get update (no candidate for linux-image-amd64 yet)"
		apt-get update -q >"$dir/apt-update.log" 2>&1 || true
		pkg=$(kernel_package)
	fi
	[[ -n $pkg ]] || unavailable "apt knows no linux-image-amd64 (run apt-get update, or set GDRB_VM_KERNEL_DEB)"
	# As root, apt drops to the _apt user, which cannot write into a private cache.
	[[ $(id -u) -eq 0 ]] && apt_opts=(-o APT::Sandbox::User=root)
	log "fetching $pkg"
	if ! (cd "$dir" && apt-get download -q "${apt_opts[@]}" "$pkg") >"$dir/apt-download.log" 2>&1; then
		sed 's/^/  /' "$dir/apt-download.log" >&2
		unavailable "apt-get download $pkg failed"
	fi
	printf '%s\n' "$dir"/"$pkg"_*.deb
}

# Copy module FILE to DEST as a plain .ko (busybox insmod reads no compressed ones).
copy_module() {
	local file=$1 dest=$2
	case $file in
	*.ko) cp "$file" "$dest" ;;
	*.ko.xz) xz -dc "$file" >"$dest" ;;
	*.ko.zst) zstd -qdc "$file" >"$dest" ;;
	*.ko.gz) gzip -dc "$file" >"$dest" ;;
	*) return 1 ;;
	esac
}

# The initramfs /init: mount the basics, load the modules, hand over to the
# per-run script that the host put into the job share.
write_init() {
	cat >"$1" <<'EOF'
#!/bin/busybox sh
/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin /proc /sys /dev /job /host
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r ko; do
	insmod "/lib/modules/$ko" || echo "rxe-vm: insmod $ko failed"
done </lib/modules/load-order
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 gdrbjob /job; then
	exec sh /job/init.sh
fi
echo "rxe-vm: cannot mount the job share"
poweroff -f
EOF
	chmod 755 "$1"
}

cmd_prepare() {
	local force=0 kver tmp deb unpack busybox initrd m ko missing
	while [[ $# -gt 0 ]]; do
		case $1 in
		--force) force=1 ;;
		*) usage_error "prepare: unknown option '$1'" ;;
		esac
		shift
	done
	for tool in dpkg depmod modprobe cpio gzip; do
		command -v "$tool" >/dev/null 2>&1 || unavailable "no $tool (Debian: dpkg kmod cpio gzip)"
	done
	busybox=$(command -v busybox || true)
	[[ -n $busybox ]] || unavailable "no busybox (Debian: busybox-static)"
	# A dynamic busybox would need a libc in the initramfs.
	if ldd "$busybox" >/dev/null 2>&1; then
		unavailable "$busybox is not statically linked (Debian: busybox-static)"
	fi
	mkdir -p "$cache_dir" 2>/dev/null || unavailable "cannot create the cache $cache_dir (set GDRB_VM_CACHE)"

	# One prepare at a time; a second waits and then finds the cache complete.
	exec 9>"$cache_dir/.lock"
	if command -v flock >/dev/null 2>&1; then
		flock 9
	fi
	if [[ $force -eq 0 && -n $(cached_kernel) ]]; then
		log "prepared: $cache_dir/$(cached_kernel)"
		return 0
	fi

	tmp=$(mktemp -d "$cache_dir/.prepare.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	deb=$(fetch_kernel_deb "$tmp")
	unpack=$tmp/unpack
	dpkg -x "$deb" "$unpack" || unavailable "dpkg -x $deb failed"
	kver=$(find "$unpack/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | head -n 1)
	[[ -n $kver && -f $unpack/boot/vmlinuz-$kver ]] || unavailable "$deb holds no kernel image"
	depmod -b "$unpack" "$kver" || die "depmod -b $unpack $kver failed"

	initrd=$tmp/initrd
	mkdir -p "$initrd/bin" "$initrd/lib/modules"
	cp "$busybox" "$initrd/bin/busybox"
	write_init "$initrd/init"
	: >"$tmp/order"
	missing=()
	for m in "${vm_modules[@]}"; do
		if modprobe -d "$unpack" -S "$kver" --show-depends "$m" >"$tmp/deps" 2>/dev/null; then
			awk '$1 == "insmod" { print $2 }' "$tmp/deps" >>"$tmp/order"
		else
			missing+=("$m")
		fi
	done
	[[ ${#missing[@]} -eq 0 ]] || unavailable "kernel $kver lacks the modules ${missing[*]}"
	awk '!seen[$0]++' "$tmp/order" | while read -r ko; do
		m=$(basename "$ko")
		m=${m%%.ko*}.ko
		copy_module "$ko" "$initrd/lib/modules/$m" || die "cannot unpack module $ko"
		printf '%s\n' "$m" >>"$initrd/lib/modules/load-order"
	done

	mkdir -p "$tmp/out"
	cp "$unpack/boot/vmlinuz-$kver" "$tmp/out/vmlinuz"
	(cd "$initrd" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -9) >"$tmp/out/initrd.img"
	cp "$initrd/lib/modules/load-order" "$tmp/out/modules"
	printf '%s\n' "$(basename "$deb")" >"$tmp/out/package"
	printf '%s\n' "$initrd_format" >"$tmp/out/format"

	rm -rf "${cache_dir:?}/$kver"
	mv "$tmp/out" "$cache_dir/$kver"
	printf '%s\n' "$kver" >"$tmp/current"
	mv "$tmp/current" "$cache_dir/current"
	rm -rf "$tmp"
	trap - EXIT
	log "prepared: $cache_dir/$kver ($(basename "$deb"))"
}

cmd_info() {
	local kver
	kver=$(cached_kernel)
	printf 'cache: %s\n' "$cache_dir"
	if [[ -n $kver ]]; then
		printf 'kernel: %s (%s)\n' "$kver" "$(cat "$cache_dir/$kver/package")"
	else
		printf 'kernel: none prepared\n'
	fi
}

# The per-run script, run by the initramfs's /init (busybox sh) from the job share.
write_vm_init() {
	cat >"$1" <<'EOF'
# Per-run VM setup, then the command in a chroot of the host's root.
say() { echo "rxe-vm(vm): $*"; }
bail() {
	say "$*"
	echo "$*" >/job/setup-error
	sync
	poweroff -f
}
opts=trans=virtio,version=9p2000.L,msize=262144
. /job/vm.conf
mount -t 9p -o "$opts,ro,cache=loose" hostroot /host || bail "cannot mount the host root"
mount -t proc proc /host/proc || bail "cannot mount /proc"
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts devpts /host/dev/pts
for d in /tmp /run /dev/shm; do
	mount -t tmpfs -o mode=1777 tmpfs "/host$d" || bail "cannot mount tmpfs on $d"
done
# Open MPI refuses the node name "(none)"; the name must also resolve, and a cluster's VMs
# find each other by name. A root without /etc/hosts (a debootstrap root has none) has
# nothing to bind it onto in the read-only share: its /etc is copied, with the names added.
hostname "$vm_hostname"
{ cat /host/etc/hosts 2>/dev/null; cat /job/hosts; } >/hosts
if [ -f /host/etc/hosts ]; then
	mount --bind /hosts /host/etc/hosts
else
	cp -a /host/etc /etc.host && cp /hosts /etc.host/hosts && mount --bind /etc.host /host/etc
fi || bail "cannot put the VMs' names in /etc/hosts"
mkdir -p /host/run/gdrb-vm
mount --bind /job /host/run/gdrb-vm
while read -r tag dir; do
	[ -n "$tag" ] || continue
	mkdir -p "/host$dir" 2>/dev/null
	mount -t 9p -o "$opts" "$tag" "/host$dir" || bail "cannot mount the share $dir"
done </job/shares

ip link set lo up
ip addr add "$vm_ip/24" dev eth0 || bail "no eth0"
ip link set eth0 up
chroot /host rdma link add rxe0 type rxe netdev eth0 || bail "rdma link add rxe0 failed"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
	i=$((i + 1))
	[ $i -le 50 ] || bail "rxe0 port 1 not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state 2>&1)"
	sleep 0.1
done
# A cluster's first VM: the others' remote shells answer before the command starts.
if [ -n "$vm_agents" ]; then
	chroot /host /run/gdrb-vm/rsh --wait 300 $vm_agents ||
		bail "the remote shell of $vm_agents did not answer"
fi
say "rxe0 ACTIVE on eth0 $vm_ip; running the command"

while read -r sec cmd; do
	[ -n "$sec" ] || continue
	(sleep "$sec" && say "at ${sec}s: $cmd" && chroot /host /bin/sh -c "$cmd") &
done </job/faults
chroot /host /bin/bash /run/gdrb-vm/cmd.sh </dev/null >/job/stdout 2>/job/stderr
echo $? >/job/rc.tmp
mv /job/rc.tmp /job/rc
sync
umount /host/run/gdrb-vm 2>/dev/null
poweroff -f
EOF
}

# The command script, run by bash in the chroot: environment, directory, command.
write_cmd() {
	local file=$1 name
	shift
	{
		echo '# Generated by rxe-vm.sh run'
		for name in $(compgen -e); do
			case $name in
			# Per-host or per-process state that means nothing in the VM; make's
			# jobserver descriptors do not exist there.
			HOSTNAME | PWD | OLDPWD | SHLVL | _ | MAKEFLAGS | MFLAGS | MAKELEVEL | \
				BASH_FUNC_* | SSH_* | DISPLAY | XDG_RUNTIME_DIR) ;;
			*) printf 'export %s=%q\n' "$name" "${!name}" ;;
			esac
		done
		printf 'cd -- %q || { echo "rxe-vm: the working directory %q is not visible in the VM (its /tmp is empty; use --share)" >&2; exit 125; }\n' \
			"$PWD" "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$file"
}

# host_inject JOB FD "SEC MCMD"...: once the VM has started the command, send
# each qemu monitor command MCMD to FD at its time (seconds after the start).
host_inject() {
	local job=$1 fd=$2 fault sec now=0
	shift 2
	until grep -q 'running the command' "$job/console.log" 2>/dev/null; do
		sleep 0.2
	done
	while IFS= read -r fault; do
		sec=${fault%% *}
		sleep "$(awk -v a="$sec" -v b="$now" 'BEGIN { print (a > b) ? a - b : 0 }')"
		now=$sec
		log "host, at ${sec}s: ${fault#* }"
		printf '%s\n' "${fault#* }" >&"$fd"
	done < <(printf '%s\n' "$@" | sort -n -k 1,1)
}

# qemu's option syntax doubles commas inside values.
qemu_escape() { printf '%s' "${1//,/,,}"; }

# progress_stamp JOB DIRS...: what changes while a VM run makes progress: the size and
# time of its console log, of CMD's outputs and of the files in the shared directories.
progress_stamp() {
	local job=$1
	shift
	find "$job/console.log" "$job/share" "$@" -maxdepth 2 -type f -printf '%s %T@ %p\n' 2>/dev/null | cksum
}

# vm_watch PID LIMIT MAX JOB DIRS...: wait for qemu (PID); kill it after LIMIT seconds
# without progress (progress_stamp unchanged) or MAX seconds in all, saying which in
# JOB/killed and returning 124; else return qemu's exit status.
vm_watch() {
	local pid=$1 limit=$2 max=$3 job=$4 stamp last now t0 idle_since rc=0
	shift 4
	t0=$(date +%s)
	idle_since=$t0
	last=$(progress_stamp "$job" "$@")
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		now=$(date +%s)
		stamp=$(progress_stamp "$job" "$@")
		if [[ $stamp != "$last" ]]; then
			last=$stamp
			idle_since=$now
		fi
		if ((now - idle_since >= limit || now - t0 >= max)); then
			if ((now - t0 >= max)); then
				printf 'after %d s in all (--max-time %d)\n' $((now - t0)) "$max" >"$job/killed"
			else
				printf 'after %d s without progress (--timeout %d; %d s in all)\n' $((now - idle_since)) \
					"$limit" $((now - t0)) >"$job/killed"
			fi
			kill -TERM "$pid" 2>/dev/null
			for _ in 1 2 3 4 5; do
				kill -0 "$pid" 2>/dev/null || break
				sleep 2
			done
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
	done
	wait "$pid" || rc=$?
	return "$rc"
}

cmd_run() {
	local limit=${GDRB_VM_TIMEOUT:-300} max_time='' mem=2048 smp=2 keep=0 verbose=0 vms=1
	local shares=() faults=() host_faults=() kver qemu job rc start elapsed i dir status
	local monfd injector='' hub='' agents=() python=''
	while [[ $# -gt 0 ]]; do
		case $1 in
		--timeout | --max-time | --share | --link-down-after | --mem | --smp | --vms)
			[[ $# -ge 2 ]] || usage_error "run: $1 needs a value" ;;&
		--at | --host-at)
			[[ $# -ge 3 ]] || usage_error "run: $1 needs SEC and a command" ;;&
		--timeout) limit=$2; shift ;;
		--max-time) max_time=$2; shift ;;
		--share) shares+=("$2"); shift ;;
		--at) faults+=("$2 $3"); shift 2 ;;
		--link-down-after) faults+=("$2 ip link set eth0 down"); shift ;;
		--host-at) host_faults+=("$2 $3"); shift 2 ;;
		--mem) mem=$2; shift ;;
		--smp) smp=$2; shift ;;
		--vms) vms=$2; shift ;;
		--keep) keep=1 ;;
		-v | --verbose) verbose=1 ;;
		--) shift; break ;;
		*) usage_error "run: unknown option '$1'" ;;
		esac
		shift
	done
	[[ $# -gt 0 ]] || usage_error "run: no command (rxe-vm.sh run [OPTIONS] -- CMD...)"
	[[ $limit =~ ^[0-9]+$ && $limit -gt 0 ]] || usage_error "run: --timeout takes whole seconds, not '$limit'"
	max_time=${max_time:-$((4 * limit))}
	[[ $max_time =~ ^[0-9]+$ && $max_time -gt 0 ]] || usage_error "run: --max-time takes whole seconds, not '$max_time'"
	[[ $mem =~ ^[0-9]+$ && $mem -ge 256 ]] || usage_error "run: --mem takes MiB, at least 256, not '$mem'"
	[[ $smp =~ ^[0-9]+$ && $smp -ge 1 ]] || usage_error "run: --smp takes a count, not '$smp'"
	[[ $vms =~ ^[1-8]$ ]] || usage_error "run: --vms takes a count from 1 to 8, not '$vms'"
	for i in "${faults[@]}" "${host_faults[@]}"; do
		[[ ${i%% *} =~ ^[0-9]+([.][0-9]+)?$ ]] ||
			usage_error "run: --at, --host-at and --link-down-after take seconds, not '${i%% *}'"
	done

	qemu=${GDRB_VM_QEMU:-qemu-system-x86_64}
	command -v "$qemu" >/dev/null 2>&1 || unavailable "no $qemu (Debian: qemu-system-x86)"
	# The VM creates rxe0 with this machine's rdma tool, in the chroot.
	[[ -x /sbin/rdma || -x /usr/sbin/rdma || -x /bin/rdma || -x /usr/bin/rdma ]] ||
		unavailable "no rdma tool (Debian: iproute2)"
	if [[ $vms -gt 1 ]]; then
		# The hub runs here, in python; the remote shell in the VMs is C (an emulated VM
		# starts python in about 10 s, and mpirun starts a client per remote daemon).
		for python in /usr/bin/python3 "$(command -v python3 || true)" ''; do
			[[ -n $python && -x $python ]] && break
		done
		[[ -n $python ]] || unavailable "a cluster of VMs needs python3 (its hub)"
		command -v "${CC:-cc}" >/dev/null 2>&1 ||
			unavailable "a cluster of VMs needs a C compiler (its remote shell, rsh.c; or set CC)"
	fi
	kver=$(cached_kernel)
	if [[ -z $kver ]]; then
		(cmd_prepare) || exit $?
		kver=$(cached_kernel)
		[[ -n $kver ]] || die "prepare left no kernel in $cache_dir"
	fi

	job=$(mktemp -d "${TMPDIR:-/tmp}/gdrb-vm.XXXXXX")
	if [[ $keep -eq 0 ]]; then
		# shellcheck disable=SC2064 # expand now: job is local
		trap "rm -rf '$job'" EXIT
	fi
	for dir in "${shares[@]}"; do
		[[ -d $dir ]] || usage_error "run: --share $dir: no such directory"
	done
	if [[ $vms -gt 1 ]] && ! "${CC:-cc}" -O2 -o "$job/rsh" "$(dirname "$0")/rsh.c" 2>"$job/rsh.log"; then
		sed 's/^/  /' "$job/rsh.log" >&2
		die "cannot compile the VMs' remote shell, $(dirname "$0")/rsh.c"
	fi
	local hosts_list=() names=()
	if [[ $vms -eq 1 ]]; then
		hosts_list=("$vm_ip $vm_hostname")
		names=("$vm_hostname")
	else
		for i in $(seq 1 "$vms"); do
			hosts_list+=("$cluster_net.$i gdrb-vm$i")
			names+=("gdrb-vm$i")
		done
		GDRB_VM_HOSTS=$(IFS=, && echo "${names[*]}")
		export GDRB_VM_HOSTS
		export GDRB_VM_RSH=/run/gdrb-vm/rsh
		# mpirun starts the daemons of the other VMs through the remote shell, one by
		# one from gdrb-vm1 (no tree spawn), and everything goes over eth0.
		export OMPI_MCA_plm_rsh_agent=$GDRB_VM_RSH OMPI_MCA_plm_rsh_no_tree_spawn=1
		export OMPI_MCA_oob_tcp_if_include=eth0 OMPI_MCA_btl_tcp_if_include=eth0
	fi
	# VM i's files: $job/share (VM 1, which runs CMD), $job/share-I for the others.
	for i in $(seq 1 "$vms"); do
		local sh=$job/share ip=$vm_ip
		[[ $i -gt 1 ]] && sh=$job/share-$i
		[[ $vms -gt 1 ]] && ip=$cluster_net.$i
		mkdir -p "$sh"
		write_vm_init "$sh/init.sh"
		if [[ $i -eq 1 ]]; then
			write_cmd "$sh/cmd.sh" "$@"
			printf '%s\n' "${faults[@]}" >"$sh/faults"
		else
			write_cmd "$sh/cmd.sh" /run/gdrb-vm/rsh --serve "$rsh_port"
			: >"$sh/faults"
		fi
		{
			printf 'vm_ip=%s\nvm_hostname=%s\n' "$ip" "${names[$((i - 1))]}"
			# VM 1 waits for the others' remote shells.
			printf 'vm_agents="%s"\n' "$([[ $i -eq 1 && $vms -gt 1 ]] && echo "${names[@]:1}")"
		} >"$sh/vm.conf"
		printf '%s\n' "${hosts_list[@]}" >"$sh/hosts"
		if [[ $vms -gt 1 ]]; then
			cp "$job/rsh" "$sh/rsh"
		fi
		: >"$sh/shares"
	done
	local virtfs=()
	i=0
	for dir in "${shares[@]}"; do
		dir=$(cd "$dir" && pwd -P)
		printf 'share%d %s\n' "$i" "$dir" | tee -a "$job"/share*/shares >/dev/null
		virtfs+=(-virtfs "local,path=$(qemu_escape "$dir"),mount_tag=share$i,security_model=none")
		i=$((i + 1))
	done

	# The monitor reads from a FIFO that this shell holds open too, so that
	# writing to it never blocks, whether qemu still runs or not.
	mkfifo "$job/monitor.in" "$job/monitor.out"
	exec {monfd}<>"$job/monitor.in"
	if [[ ${#host_faults[@]} -gt 0 ]]; then
		host_inject "$job" "$monfd" "${host_faults[@]}" &
		injector=$!
	fi

	local net=(-netdev 'user,id=net0,restrict=on')
	if [[ $vms -gt 1 ]]; then
		"$python" "$(dirname "$0")/hub.py" "$job/hub.port" 2>"$job/hub.log" &
		hub=$!
		for _ in $(seq 1 100); do
			[[ -s $job/hub.port ]] && break
			kill -0 "$hub" 2>/dev/null || break
			sleep 0.1
		done
		[[ -s $job/hub.port ]] || die "the cluster's hub did not start: $(cat "$job/hub.log")"
		net=(-netdev "socket,id=net0,connect=127.0.0.1:$(cat "$job/hub.port")")
	fi
	# vm_qemu I ARGS...: VM I's qemu (its console, NIC and job share), in the background.
	# no_timer_check: on a loaded host the emulated timer ticks too late for the kernel's
	# IO-APIC timer check, which then panics at boot ("IO-APIC + timer doesn't work!").
	vm_qemu() {
		local n=$1 sh=$job/share console=$job/console.log
		shift
		[[ $n -gt 1 ]] && sh=$job/share-$n console=$job/console-$n.log
		"$qemu" \
			-accel "${GDRB_VM_ACCEL:-tcg}" -cpu max -smp "$smp" -m "$mem" \
			-nodefaults -no-user-config -display none -no-reboot \
			-serial "file:$console" \
			-kernel "$cache_dir/$kver/vmlinuz" -initrd "$cache_dir/$kver/initrd.img" \
			-append "console=ttyS0 quiet panic=-1 no_timer_check rdinit=/init" \
			"${net[@]}" -device "virtio-net-pci,netdev=net0,romfile=,mac=52:54:00:12:34:$(printf %02x "$n")" \
			-virtfs "local,path=/,mount_tag=hostroot,readonly=on,multidevs=remap,security_model=none" \
			-virtfs "local,path=$(qemu_escape "$sh"),mount_tag=gdrbjob,security_model=none" \
			"${virtfs[@]}" "$@" </dev/null >"$job/qemu-$n.log" 2>&1 &
	}
	start=$(date +%s.%N)
	status=0
	for i in $(seq 2 "$vms"); do
		vm_qemu "$i"
		agents+=($!)
	done
	vm_qemu 1 -monitor "pipe:$job/monitor"
	vm_watch $! "$limit" "$max_time" "$job" "${shares[@]}" || status=$?
	for i in "${agents[@]}" $hub; do
		kill -TERM "$i" 2>/dev/null || true
	done
	for i in "${agents[@]}" $hub; do
		wait "$i" 2>/dev/null || true
	done
	mv "$job/qemu-1.log" "$job/qemu.log"
	if [[ -n $injector ]]; then
		kill "$injector" 2>/dev/null || true
		wait "$injector" 2>/dev/null || true
	fi
	exec {monfd}>&-
	elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

	if [[ $verbose -eq 1 ]]; then
		sed 's/^/  console: /' "$job/console.log" >&2
		for i in $(seq 2 "$vms"); do
			sed "s/^/  console gdrb-vm$i: /" "$job/console-$i.log" >&2
		done
		log "kernel $kver, boot + command + power-off: $elapsed s"
	fi
	[[ $keep -eq 1 ]] && log "run directory kept: $job"
	if [[ ! -f $job/share/rc ]]; then
		if [[ $verbose -eq 0 ]]; then
			tail -n 30 "$job/console.log" 2>/dev/null | sed 's/^/  console: /' >&2
			for i in $(seq 2 "$vms"); do
				tail -n 5 "$job/console-$i.log" 2>/dev/null | sed "s/^/  console gdrb-vm$i: /" >&2
			done
		fi
		sed 's/^/  qemu: /' "$job/qemu.log" >&2
		if [[ $status -eq 124 || $status -eq 137 ]]; then
			log "time limit: the VM was killed: $(cat "$job/killed" 2>/dev/null)"
			exit 124
		fi
		if [[ -f $job/share/setup-error ]]; then
			log "VM setup failed: $(cat "$job/share/setup-error")"
		else
			log "the VM stopped before the command finished (qemu exit $status)"
		fi
		exit 125
	fi
	rc=$(cat "$job/share/rc")
	cat "$job/share/stdout"
	cat "$job/share/stderr" >&2
	exit "$rc"
}

case ${1:-} in
prepare) shift; cmd_prepare "$@" ;;
run) shift; cmd_run "$@" ;;
info) shift; cmd_info ;;
-h | --help | help) usage ;;
*)
	usage >&2
	exit 2
	;;
esac
