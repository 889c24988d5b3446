// Where a registry keeps its files, relative to the registry root. Its own module, free of imports,
// so `capreg new` can name the files without loading the parser.
export const TOOLSETS_FILE = 'capabilities/toolsets.yaml';
