// Compile-time check that the published declarations (index.d.ts) and the implementation's types
// (src/index.ts) agree, both ways. Checked by `npm run typecheck` and test/unit/package-types.test.ts.
import type * as Published from '../../index.js';
import type * as Source from '../../src/index.ts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Public<T> = Omit<T, 'emulator'>;

export const checks: {
  options: Same<Published.StartEmulatorOptions, Source.StartEmulatorOptions>;
  started: Same<Public<Published.StartedEmulator>, Public<Source.StartedEmulator>>;
  users: Same<Published.EmulatorUser, Source.EmulatorUser>;
  reset: Same<Published.ResetOptions, Source.ResetOptions>;
  snapshot: Same<Published.Snapshot, Source.Snapshot>;
  clock: Same<Published.EmulatorClock, Source.EmulatorClock>;
  faultSpec: Same<Published.FaultSpec, Source.FaultSpec>;
  fault: Same<Published.Fault, Source.Fault>;
  faults: Same<Published.EmulatorFaults, Source.EmulatorFaults>;
  start: Same<Parameters<typeof Published.startEmulator>, Parameters<typeof Source.startEmulator>>;
  version: Same<typeof Published.VERSION, typeof Source.VERSION>;
  upOptions: Same<Published.UpOptions, Source.UpOptions>;
  upHandle: Same<Public<Published.UpHandle>, Public<Source.UpHandle>>;
  addonAccess: Same<Published.AddonAccess, Source.AddonAccess>;
  deploymentResult: Same<Published.DeploymentResult, Source.DeploymentResult>;
  up: Same<Parameters<typeof Published.up>, Parameters<typeof Source.up>>;
  dataDirHolder: Same<Published.DataDirHolder, Source.DataDirHolder>;
  dataDirInUse: Same<InstanceType<typeof Published.DataDirInUseError>, InstanceType<typeof Source.DataDirInUseError>>;
} = {
  dataDirHolder: true,
  dataDirInUse: true,
  upOptions: true,
  upHandle: true,
  addonAccess: true,
  deploymentResult: true,
  up: true,
  options: true,
  started: true,
  users: true,
  reset: true,
  snapshot: true,
  clock: true,
  faultSpec: true,
  fault: true,
  faults: true,
  start: true,
  version: true,
};
