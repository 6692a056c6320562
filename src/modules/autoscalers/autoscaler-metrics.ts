// What an autoscaler may follow and its floor, apart from the autoscaler schemas: the autoscaler engine and service
// read them at start (the autoscalers area is built at start), the schemas only when its routes are first used.

// The metrics an autoscaler can follow (doc.scalingo.com/platform/app/autoscaler, "Available Metrics"):
// RAM, CPU, swap, p95 response time, RPM (`all`) and RPM per container, named as the recommended-values
// endpoint names them. The last three are router metrics: web containers only.
export const AUTOSCALER_METRICS = ['cpu', 'memory', 'swap', 'p95_response_time', 'all', 'rpm_per_container'] as const;
export const ROUTER_METRICS = new Set<string>(['p95_response_time', 'all', 'rpm_per_container']);
/** Resource metrics take a fraction as target (the CLI's example: `--metric cpu --target 0.75`). */
export const RESOURCE_METRICS = new Set<string>(['cpu', 'memory', 'swap']);
/** The platform's floor: an autoscaler never goes under 2 containers (availability). */
export const MIN_CONTAINERS_FLOOR = 2;
