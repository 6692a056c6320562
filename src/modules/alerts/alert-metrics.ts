// The metrics an alert can watch, apart from the alert schemas: the alerts service and view read them at start
// (the monitoring area is built at start), the schemas only when the alerts routes are first used.

// The recommended-value list of the reference, which the npm client's MetricTypes and the alerts user
// documentation repeat.
export const ALERT_METRICS = ['cpu', 'memory', 'swap', 'p95_response_time', '5XX', 'all', 'rpm_per_container'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];
/** Resource metrics take their limit as a fraction (0.1 means 10 %). */
export const RESOURCE_METRICS = new Set<string>(['cpu', 'memory', 'swap']);
