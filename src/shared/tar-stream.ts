type TarStream = typeof import('tar-stream');

let loading: Promise<TarStream> | undefined;

/**
 * tar-stream, loaded at its first use (image builds, one-off uploads): a start does not need it. It is a CommonJS
 * package: node gives its exports as named ones and as `default`, the bundle's code splitting as `default` only.
 */
export function loadTarStream(): Promise<TarStream> {
  loading ??= import('tar-stream').then((m) => (m as { default?: TarStream }).default ?? m);
  return loading;
}
