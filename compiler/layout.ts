// Where a registry keeps its files, relative to the registry root. Its own module, free of imports,
// so `capreg new` can name the files without loading the parser.
export const TOOLSETS_FILE = 'capabilities/toolsets.yaml';
/** The split layout: one or more toolsets per `capabilities/toolsets/<name>.yaml`, next to or instead of TOOLSETS_FILE. */
export const TOOLSETS_FOLDER = 'capabilities/toolsets';
