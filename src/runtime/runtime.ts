// The only view of the container engine the rest of the emulator has. docker-runtime.ts is its
// one implementation over dockerode; tests may pass another.

export type EngineStatus = { ok: true; version: string; apiVersion: string } | { ok: false; error: string };

export interface ContainerRuntime {
  /** Asks the engine whether it answers (GET /_ping + version), within a short timeout. */
  probe(): Promise<EngineStatus>;
  close(): Promise<void>;
}
