// One router log line per request, in the platform's key=value shape. Sample of a real line:
//   [router] method=POST path="/api/answers" host=app.scalingo.io request_id=6a69…-c11241a6db60 container=web-7
//   from="10.127.0.1" protocol=https status=201 duration=0.025s bytes=551 referer="https://…" user_agent="Mozilla/5.0 …"
// The Scalingo CLI colours these lines as key=value pairs whose quoted values escape `"` with a backslash
// (cli logs/logs.go colorizeRouterLogs). Sources in docs/fidelity.md, "Router".

export interface AccessLogFields {
  method: string;
  path: string;
  host: string;
  requestId: string;
  container: string | null;
  from: string;
  protocol: string;
  status: number;
  durationMs: number;
  bytes: number;
  referer: string | undefined;
  userAgent: string | undefined;
}

export function formatAccessLine(f: AccessLogFields): string {
  return [
    `method=${bare(f.method)}`,
    `path=${quoted(f.path)}`,
    `host=${bare(f.host)}`,
    `request_id=${bare(f.requestId)}`,
    `container=${f.container ? bare(f.container) : '-'}`,
    `from=${quoted(f.from)}`,
    `protocol=${bare(f.protocol)}`,
    `status=${f.status}`,
    `duration=${(f.durationMs / 1000).toFixed(3)}s`,
    `bytes=${f.bytes}`,
    `referer=${quoted(f.referer || '-')}`,
    `user_agent=${quoted(f.userAgent || '-')}`,
  ].join(' ');
}

// A value coming from the client must not break the line into two or fake another key.
function quoted(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r/g, '\\r').replace(/\n/g, '\\n')}"`;
}

function bare(v: string): string {
  return v.replace(/[\s"=]/g, '_') || '-';
}
