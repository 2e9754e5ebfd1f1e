"""One CloudWatch dashboard of the stack's figures: the alarms' states, then a row per part
(the door, the front function, the queue and its worker, the sweeper, the table, the gRPC
side, push delivery), each graph holding the metrics the alarms watch and their context,
and two rows of the kit's own metrics of each function and the gRPC container (tasks; the
store and refusals: infra/kit_metrics.py)."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from a2akit import metrics
from a2akit.push.metric import DIMENSION, FAILED_METRIC, METRIC_NAMESPACE

from .grpc_service import GrpcService
from .jsonrpc_api import JsonRpcApi
from .kit_metrics import failed_rate, kit_metric, search
from .push import PushDispatcher
from .worker import QueueWorker

__all__ = ["Dashboard"]

_PERIOD = Duration.minutes(1)
_WIDTH = 8  # three graphs a row (a dashboard is 24 units wide)


def _graph(title: str, metrics: Sequence[cloudwatch.IMetric],
           right: Sequence[cloudwatch.IMetric] = ()) -> cloudwatch.GraphWidget:
    return cloudwatch.GraphWidget(title=title, left=list(metrics), right=list(right),
                                  width=_WIDTH, height=6)


def _function_row(name: str, function: lambda_.IFunction) -> list[cloudwatch.IWidget]:
    def metric(metric_name: str, statistic: str = "Sum") -> cloudwatch.Metric:
        return function.metric(metric_name, period=_PERIOD, statistic=statistic)

    return [
        _graph(f"{name}: invocations", [metric("Invocations"), metric("Errors"),
                                        metric("Throttles")]),
        _graph(f"{name}: duration (ms)", [metric("Duration", "p50"), metric("Duration", "p99"),
                                          metric("Duration", "Maximum")]),
        _graph(f"{name}: concurrency", [metric("ConcurrentExecutions", "Maximum")]),
    ]


def _kit_rows(services: dict[str, str], runners: Sequence[str]) -> list[list[cloudwatch.IWidget]]:
    """The kit's metrics of `services` (name -> Service: the door, the worker when there is
    one, the sweeper, the gRPC container and the push dispatcher when there are), one series
    per process, or per state, operation or reason (SEARCH). `runners`: the names that run
    agents."""
    running = {name: services[name] for name in runners}
    settlers = {name: service for name, service in services.items() if name != "push"}
    # Whoever writes tasks as it answers or runs them.
    writers = {name: service for name, service in settlers.items() if name != "sweeper"}
    doors = {name: service for name, service in services.items() if name in ("door", "grpc")}
    return [
        [
            _graph("Tasks: failed (% of ended)", [failed_rate(service, _PERIOD, name)
                                                   for name, service in running.items()]),
            _graph("Tasks: ended by state", [
                search(metrics.TASKS_ENDED, "State", service, _PERIOD)
                for service in settlers.values()]),
            _graph("Tasks: duration p99 (ms)", [
                search(metrics.TASK_DURATION, "State", service, _PERIOD, "p99")
                for service in running.values()]),
        ],
        [
            _graph("Store: lease expiries, version conflicts", [
                kit_metric(metrics.LEASE_EXPIRED, service, _PERIOD, label=f"expired {name}")
                for name, service in settlers.items()], [
                kit_metric(metrics.CONFLICTS, service, _PERIOD, label=f"conflicts {name}")
                for name, service in writers.items()]),
            _graph("Store: DynamoDB throttles by operation", [
                search(metrics.THROTTLES, "Operation", service, _PERIOD)
                for service in services.values()]),
            _graph("Refused callers (door, gRPC)", [
                metric for name, service in doors.items() for metric in (
                    search(metrics.AUTH_REFUSED, "Reason", service, _PERIOD),
                    kit_metric(metrics.QUOTA_REFUSED, service, _PERIOD,
                               label=f"quota {name}"))]),
        ],
    ]


class Dashboard(Construct):
    """Exposes `dashboard`."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        alarms: Sequence[cloudwatch.Alarm],
        table: dynamodb.Table,
        jsonrpc: JsonRpcApi,
        sweeper: lambda_.IFunction,
        worker: QueueWorker | None = None,
        grpc: GrpcService | None = None,
        push: PushDispatcher | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        api = jsonrpc.rest_api
        rows: list[list[cloudwatch.IWidget]] = [
            [cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(alarms), width=24)],
            [
                _graph("Door: requests", [api.metric_count(period=_PERIOD),
                                          api.metric_client_error(period=_PERIOD),
                                          api.metric_server_error(period=_PERIOD)]),
                _graph("Door: latency (ms)", [
                    api.metric_latency(period=_PERIOD, statistic=statistic)
                    for statistic in ("p50", "p90", "p99")]),
                _graph("Door: integration latency (ms)", [
                    api.metric_integration_latency(period=_PERIOD, statistic=statistic)
                    for statistic in ("p50", "p99")]),
            ],
            _function_row("Front door", jsonrpc.function),
        ]
        if worker is not None:
            rows.append(_function_row("Worker", worker.function))
            queue, dead = worker.queue, worker.dead_letter_queue
            rows.append([
                _graph("Queue: messages", [
                    queue.metric_number_of_messages_sent(period=_PERIOD),
                    queue.metric_approximate_number_of_messages_visible(period=_PERIOD,
                                                                        statistic="Maximum"),
                    queue.metric_approximate_number_of_messages_not_visible(
                        period=_PERIOD, statistic="Maximum")]),
                _graph("Queue: oldest message (s), time queued (ms)", [
                    queue.metric_approximate_age_of_oldest_message(period=_PERIOD,
                                                                   statistic="Maximum")], [
                    kit_metric(metrics.TIME_QUEUED, worker.function.function_name, _PERIOD,
                               statistic, label=f"time queued {statistic}")
                    for statistic in ("p50", "p99")]),
                _graph("Dead-letter queue: messages", [
                    dead.metric_approximate_number_of_messages_visible(period=_PERIOD,
                                                                       statistic="Maximum")]),
            ])
        rows.append(_function_row("Sweeper", sweeper))
        rows.append([
            _graph("Table: consumed capacity units", [
                table.metric_consumed_read_capacity_units(period=_PERIOD),
                table.metric_consumed_write_capacity_units(period=_PERIOD)]),
            _graph("Table: throttled requests", [
                table.metric("ReadThrottleEvents", period=_PERIOD, statistic="Sum"),
                table.metric("WriteThrottleEvents", period=_PERIOD, statistic="Sum")]),
            _graph("Table: system errors", [
                table.metric("SystemErrors", period=_PERIOD, statistic="Sum")]),
        ])
        if grpc is not None:
            service, group = grpc.service, grpc.target_group
            rows.append([
                _graph("gRPC: CPU and memory (%)", [
                    service.metric_cpu_utilization(period=_PERIOD),
                    service.metric_memory_utilization(period=_PERIOD)]),
                _graph("gRPC: targets", [
                    group.metrics.healthy_host_count(period=_PERIOD, statistic="Minimum"),
                    group.metrics.unhealthy_host_count(period=_PERIOD, statistic="Maximum")]),
                _graph("gRPC: requests", [
                    group.metrics.request_count(period=_PERIOD),
                    group.metrics.target_response_time(period=_PERIOD, statistic="p99")]),
            ])
        if push is not None:
            rows.append(_function_row("Push dispatcher", push.function))
            rows.append([
                _graph("Push: deliveries", [
                    kit_metric(metrics.PUSH_DELIVERED, push.function.function_name, _PERIOD),
                    kit_metric(metrics.PUSH_RETRIES, push.function.function_name, _PERIOD),
                    cloudwatch.Metric(
                        namespace=METRIC_NAMESPACE, metric_name=FAILED_METRIC,
                        dimensions_map={DIMENSION: push.function.function_name},
                        statistic="Sum", period=_PERIOD)]),
                _graph("Push: stream iterator age (ms)", [
                    push.function.metric("IteratorAge", period=_PERIOD, statistic="Maximum")]),
                _graph("Push: queues", [
                    push.dead_letter_queue.metric_approximate_number_of_messages_visible(
                        period=_PERIOD, statistic="Maximum"),
                    push.failed_batches.metric_approximate_number_of_messages_visible(
                        period=_PERIOD, statistic="Maximum")]),
            ])
        services = {"door": jsonrpc.function.function_name,
                    **({"worker": worker.function.function_name} if worker else {}),
                    "sweeper": sweeper.function_name,
                    **({"grpc": grpc.service_name} if grpc else {}),
                    **({"push": push.function.function_name} if push else {})}
        runners = ["door", *(["worker"] if worker else []),
                   *(["grpc"] if grpc and grpc.runs_agents else [])]
        rows += _kit_rows(services, runners)
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", widgets=rows)
