// What the end-to-end programs share: the OpenTelemetry SDK exporting over
// OTLP/gRPC to the mcpdrift serve the Go harness started, and a line
// protocol with the harness (JSON lines on stdout, commands on stdin).
//
// Environment: MCPDRIFT_OTLP_GRPC (host:port), MCPDRIFT_ENV (the
// deployment.environment.name that tells the run's events apart),
// MCPDRIFT_SERVICE (service.name), EXTERNAL_URL (the fake external
// service's append-only log), MCP_URL (for the clients).
import { createInterface } from "node:readline";

import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";

import { ATTR } from "../../src/index.js";

export function env(name: string): string {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

/** provider returns the run's LoggerProvider: OTLP/gRPC to the ingester, batched. */
export function provider(): LoggerProvider {
  const exporter = new OTLPLogExporter({ url: `http://${env("MCPDRIFT_OTLP_GRPC")}` });
  return new LoggerProvider({
    resource: resourceFromAttributes({
      [ATTR.service_name]: env("MCPDRIFT_SERVICE"),
      [ATTR.service_version]: "build-42",
      [ATTR.environment]: env("MCPDRIFT_ENV"),
    }),
    processors: [new BatchLogRecordProcessor({ exporter, scheduledDelayMillis: 3_600_000 })],
  });
}

/** say writes one message to the harness. */
export function say(msg: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

const input = createInterface({ input: process.stdin });
const pending: string[] = [];
const waiting: ((l: string) => void)[] = [];
input.on("line", (l) => {
  const w = waiting.shift();
  if (w) w(l.trim());
  else pending.push(l.trim());
});
input.on("close", () => {
  for (const w of waiting.splice(0)) w("");
});

/** next returns the harness's next command ("" once stdin is closed). */
export function next(): Promise<string> {
  return pending.length > 0 ? Promise.resolve(pending.shift()!) : new Promise<string>((resolve) => waiting.push(resolve));
}

/** expect waits for the harness's next command and checks it is want. */
export async function expect(want: string): Promise<void> {
  const got = await next();
  if (got !== want) throw new Error(`the harness said ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

/** closeInput lets the process exit once its work is done. */
export function closeInput(): void {
  input.close();
}

/** fail reports an error to the harness and exits. */
export function fail(err: unknown): never {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
}
