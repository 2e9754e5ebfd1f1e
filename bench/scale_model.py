"""Where the stack stops: a scale model from the measured units and AWS's published quotas
(issue 39; docs/scale.md shows its output).

    .venv/bin/python bench/scale_model.py [--measured FILE]

For 10, 100, 1,000 and 10,000 messages per second of two workloads (an echo, and a
30-second streaming agent writing 100 KB in 200 chunks), both in queue mode (the default
door, `returnImmediately`), it computes what each limit sees, names the first one reached
and the cost per hour. The units per message are the figures `bench/write_units.py`
measured (workloads b and c), built in below; `--measured FILE` takes them from
`bench/write_units.py --json > FILE` instead (its last run).

Every quota and price is a published default of us-east-1 (December 2026 as far as known
here); check the AWS pages before relying on one. The model is arithmetic, not a load test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

# --- measured (bench/write_units.py, after issue 39) ----------------------------------------

# Per message: write and read request units, and how many of the write units fall on the
# owner's list shard (list_by_scope entry puts and deletes) and on its count item (each
# transactional count update is 2), the hot spots of one owner.
MEASURED = {
    "echo": {"wru": 37.0, "rru": 3.0},
    "stream": {"wru": 1854.0, "rru": 65.0},
}
LIST_SHARD_WCU = {"echo": 3, "stream": 2 * 201 + 1}  # create 1, each later write 2
COUNT_WCU = {"echo": 6, "stream": 6}  # create, the state changes that end it, retirement

# --- published quotas and prices (us-east-1 defaults) ---------------------------------------

PARTITION_WCU = 1000  # per partition key, per second
LIST_SHARDS = 8  # a2akit.store.table.LIST_SHARDS
TABLE_INITIAL_WRU = 4000  # a new on-demand table, before it has seen a higher peak
TABLE_QUOTA_WRU = 40000  # per on-demand table, adjustable (Service Quotas)
TABLE_QUOTA_RRU = 40000
LAMBDA_ACCOUNT = 1000  # concurrent executions per region, adjustable
LAMBDA_SCALING = 1000  # new concurrency per function every 10 s (a ramp, not a cap)
APIGW_ACCOUNT_RPS = 10000  # REST and HTTP APIs, per region, adjustable
STAGE_RPS = 50.0  # infra/config.py throttle_rate_limit (a2a:throttleRateLimit)
DOOR_RESERVED = 100  # infra/config.py reserved_concurrency (a2a:reservedConcurrency)
WORKER_MAX = 20  # infra/config.py worker_max_concurrency (a2a:workerMaxConcurrency, <= 1000)
SQS_STANDARD_RPS = math.inf  # standard queues: nearly unlimited API calls

WRU_USD = 0.625e-6
RRU_USD = 0.125e-6
LAMBDA_REQUEST_USD = 0.20e-6
LAMBDA_GBS_USD = 0.0000133334  # arm64
APIGW_REST_USD = 3.50e-6
SQS_USD = 0.40e-6
MEMORY_GB = 0.5

# Seconds each function runs per message (docs/cost.md: door about 35 ms, worker about
# 60 ms for an echo; the streaming agent's worker for its 30 s).
DOOR_SECONDS = 0.035
WORKER_SECONDS = {"echo": 0.06, "stream": 30.0}
RATES = (10, 100, 1000, 10000)


@dataclasses.dataclass
class Check:
    limit: str
    used: float
    allowed: float
    raise_how: str

    @property
    def share(self) -> float:
        return self.used / self.allowed if self.allowed else math.inf


def checks(workload: str, rate: float, measured: dict[str, dict[str, float]]) -> list[Check]:
    units = measured[workload]
    worker = WORKER_SECONDS[workload]
    return [
        Check("API Gateway stage throttle (a2a:throttleRateLimit)", rate, STAGE_RPS,
              "raise a2a:throttleRateLimit / a2a:throttleBurstLimit (cdk.json) and redeploy"),
        Check("door's reserved concurrency (a2a:reservedConcurrency)", rate * DOOR_SECONDS,
              DOOR_RESERVED, "raise a2a:reservedConcurrency (within the account's quota)"),
        Check("worker concurrency (a2a:workerMaxConcurrency)", rate * worker, WORKER_MAX,
              "raise a2a:workerMaxConcurrency (SQS event sources allow up to 1,000)"),
        Check("Lambda account concurrency (1,000)", rate * (DOOR_SECONDS + worker),
              LAMBDA_ACCOUNT, "Service Quotas: Lambda concurrent executions (tens of "
              "thousands on request)"),
        Check("API Gateway account throttle (10,000 rps)", rate, APIGW_ACCOUNT_RPS,
              "Service Quotas: API Gateway throttle rate (on request)"),
        Check("one owner's list shard (1,000 WCU/s per partition)",
              rate * LIST_SHARD_WCU[workload] / LIST_SHARDS, PARTITION_WCU,
              "spread callers over owners (API keys); LIST_SHARDS is fixed per table"),
        Check("one owner's count item (1,000 WCU/s per partition)",
              rate * COUNT_WCU[workload] / LIST_SHARDS, PARTITION_WCU,
              "spread callers over owners; the counts follow the list shards"),
        Check("new on-demand table (4,000 WRU/s until a higher peak)", rate * units["wru"],
              TABLE_INITIAL_WRU, "set the table's warm throughput ahead of the load, or "
              "ramp (on demand doubles its previous peak within 30 minutes)"),
        Check("table quota (40,000 WRU/s)", rate * units["wru"], TABLE_QUOTA_WRU,
              "Service Quotas: DynamoDB table-level write throughput (on request)"),
        Check("table quota (40,000 RRU/s)", rate * units["rru"], TABLE_QUOTA_RRU,
              "Service Quotas: DynamoDB table-level read throughput (on request)"),
        Check("SQS standard queue", rate * 3, SQS_STANDARD_RPS, "none needed"),
    ]


def cost_per_hour(workload: str, rate: float, measured: dict[str, dict[str, float]]) -> float:
    units = measured[workload]
    per_message = (units["wru"] * WRU_USD + units["rru"] * RRU_USD
                   + 2 * LAMBDA_REQUEST_USD
                   + (DOOR_SECONDS + WORKER_SECONDS[workload]) * MEMORY_GB * LAMBDA_GBS_USD
                   + APIGW_REST_USD + 3 * SQS_USD)
    return per_message * rate * 3600


def report(measured: dict[str, dict[str, float]]) -> str:
    lines = ["| workload | msg/s | limits reached, first first (used / allowed) | "
             "next below its limit | USD per hour |", "|---|---:|---|---|---:|"]
    for workload, name in (("echo", "echo"), ("stream", "30 s streaming agent")):
        for rate in RATES:
            ranked = sorted(checks(workload, rate, measured), key=lambda c: c.share,
                            reverse=True)
            over = [c for c in ranked if c.share > 1]
            under = [c for c in ranked if c.share <= 1]
            reached = "; ".join(f"{c.limit}: {c.used:,.0f} / {c.allowed:,.0f}"
                                for c in over) or "none"
            following = (f"{under[0].limit}: {under[0].used:,.0f} / "
                         f"{under[0].allowed:,.0f}") if under else ""
            lines.append(f"| {name} | {rate:,} | {reached} | {following} | "
                         f"{cost_per_hour(workload, rate, measured):,.2f} |")
    lines += ["", "| limit | how to raise it |", "|---|---|"]
    lines += [f"| {c.limit} | {c.raise_how} |" for c in checks("echo", 1, measured)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", help="the output of bench/write_units.py --json")
    args = parser.parse_args()
    measured = dict(MEASURED)
    if args.measured:
        with open(args.measured) as file:
            runs = json.load(file)
        last = list(runs.values())[-1]
        measured = {"echo": {"wru": last["b"]["wru"], "rru": last["b"]["rru"]},
                    "stream": {"wru": last["c"]["wru"], "rru": last["c"]["rru"]}}
    print(f"units per message: echo (queue mode) {measured['echo']['wru']:,.0f} WRU "
          f"{measured['echo']['rru']:,.1f} RRU; 30 s streaming agent "
          f"{measured['stream']['wru']:,.0f} WRU {measured['stream']['rru']:,.1f} RRU")
    print(report(measured))


if __name__ == "__main__":
    main()
