/* Keeps a library with no sources yet valid. */
typedef int cacheadvise_empty_unit;
