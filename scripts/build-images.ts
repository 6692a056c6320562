// Builds the images the emulator and its tests run, offline (FROM scratch + the host's static busybox).
// The emulator builds the same image itself at start when it is missing; this script does it ahead.
import Docker from 'dockerode';
import { ensureBusyboxImage } from '../src/runtime/images.ts';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';

const docker = new Docker();
const built = await ensureBusyboxImage(docker, DEFAULT_STACK_IMAGE);
console.log(`${DEFAULT_STACK_IMAGE}: ${built ? 'built' : 'already present'}`);
