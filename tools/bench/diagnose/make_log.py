#!/usr/bin/env python3
"""Writes an NCCL INFO log of RANKS ranks that all-reduce CALLS times each on
one communicator, lines interleaved as one launcher's output would be;
with HANG=1 the last rank skips the last call. Usage: make_log.py OUT"""
import os
import sys

ranks = int(os.environ.get("RANKS", "8"))
calls = int(os.environ.get("CALLS", "25000"))
hang = os.environ.get("HANG", "0") == "1"
with open(sys.argv[1], "w") as out:
    for r in range(ranks):
        out.write(f"node{r // 8}:{100 + r}:{200 + r} [{r % 8}] NCCL INFO ncclCommInitRank comm 0x55{r:04x}0 rank {r} "
                  f"nranks {ranks} cudaDev {r % 8} nvmlDev {r % 8} busId 1000 commId 0xabc - Init COMPLETE\n")
    for k in range(calls):
        for r in range(ranks):
            if hang and k == calls - 1 and r == ranks - 1:
                continue
            out.write(f"node{r // 8}:{100 + r}:{200 + r} [{r % 8}] NCCL INFO AllReduce: opCount {k:x} sendbuff "
                      f"0x7f3a40000000 recvbuff 0x7f3a40000000 count 1048576 datatype 7 op 0 root 0 comm "
                      f"0x55{r:04x}0 [nranks={ranks}] stream 0x55d1c2a3b4c0\n")
