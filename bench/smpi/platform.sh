#!/usr/bin/env bash
# Write a SimGrid cluster platform and its hostfile:
#   bench/smpi/platform.sh NHOSTS SPEED OUTDIR  ->  OUTDIR/cluster_NHOSTS.xml, OUTDIR/hosts_NHOSTS.txt
# The network is InfiniBand-like (toolchain.md): 12.5 GB/s (100 Gb/s) links with 1 us latency per
# host link, a 1 TB/s, 0.5 us backbone, full-duplex links (SPLITDUPLEX); one core per host.
# SPEED is the host speed in flop/s as SimGrid writes it (e.g. 1Gf); smpirun's
# --cfg=smpi/host-speed (the calibration) scales the measured compute time onto it.
set -euo pipefail
n=${1:?usage: platform.sh NHOSTS SPEED OUTDIR}
speed=${2:?usage: platform.sh NHOSTS SPEED OUTDIR}
dir=${3:?usage: platform.sh NHOSTS SPEED OUTDIR}
mkdir -p "$dir"
last=$((n - 1))
cat >"$dir/cluster_$n.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="ib" prefix="node-" suffix=".sim" radical="0-$last" speed="$speed" core="1"
           bw="12.5GBps" lat="1us" bb_bw="1TBps" bb_lat="0.5us" sharing_policy="SPLITDUPLEX"/>
</platform>
XML
seq 0 "$last" | sed 's/^/node-/;s/$/.sim/' >"$dir/hosts_$n.txt"
