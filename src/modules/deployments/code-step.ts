import { packDirectory } from '../../runtime/images.ts';
import { LABELS } from '../../runtime/runtime.ts';
import { commitStep, runBuildStep } from './build-container.ts';
import { OFFLINE_BUILDS } from './build-network.ts';
import { dependencyInputs, dependencyScript } from './build-scripts.ts';
import { type Language } from './buildpacks.ts';
import { type DependencyStep } from './dependency-layer.ts';
import { planNodeBuild } from './node-build.ts';
import { type BuildpackBuild } from './slug-build.ts';

// The two steps of a buildpack-like build after the stack: the dependency step (its layer is reused
// while the dependency files are unchanged: dependency-layer.ts) and the code. Code that needs no step
// is one COPY layer built by the engine's builder; code with a step (a Node.js build script, the
// cleanup, or the whole lifecycle when it needs the code from the start) runs in a container with the
// build cache mounted, committed as the app's image.

/** The classic builder's own progress lines; the steps' output is what the deployment shows. */
const BUILDER_CHATTER = /^(Step \d+\/\d+ : | ---> |Removing intermediate container |Successfully (built|tagged) )/;

export interface BuildSteps {
  dependencies: DependencyStep | null;
  code: string | null;
}

export async function dependencyStep(b: BuildpackBuild, lang: Language): Promise<BuildSteps> {
  if (lang !== 'node') {
    const script = dependencyScript(lang);
    const what = `${lang} dependency step`;
    return {
      dependencies: { inputs: dependencyInputs(lang, b.context), script, extra: {}, reuse: true, what },
      code: null,
    };
  }
  const node = await planNodeBuild(b.context, b.cacheDir, b.env ?? {}, b.say, {
    signal: b.signal,
    node: b.nodeVersion,
  });
  const dependencies =
    node.inputs && node.dependencies
      ? { inputs: node.inputs, script: node.dependencies, extra: node.extra, reuse: node.reuse, what: 'install step' }
      : null;
  return { dependencies, code: node.code };
}

/** Builds the app's image: the code over `base`, and the code step when there is one. */
export async function addCode(b: BuildpackBuild, base: string, script: string | null): Promise<void> {
  const { runtime, say } = b;
  say('-----> Adding the code');
  if (!script) {
    await runtime.buildImage({
      contextDir: b.context,
      dockerfile: `FROM ${base}\nCOPY . /app\n`,
      tag: b.tag,
      labels: b.labels,
      network: b.network ?? OFFLINE_BUILDS,
      onLine: (l) => {
        if (!BUILDER_CHATTER.test(l)) say(/^(-----> |!|\s)/.test(l) ? l : `       ${l}`);
      },
    });
    return;
  }
  const engineId = await runBuildStep(b, {
    image: base,
    files: await packDirectory(b.context),
    script,
    env: b.env ?? {},
    what: 'build step',
    name: 'code',
  });
  // The step container's owner and type would be inherited by the app's containers: blanked.
  await commitStep(runtime, engineId, b.tag, { [LABELS.owner]: '', [LABELS.type]: '', ...b.labels });
}
