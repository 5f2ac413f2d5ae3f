/* Loading time zones as Go's time package does (see tzfile.h): TZif reading as
 * LoadLocationFromTZData does it, the zone files and directories Go searches, and
 * time.Local from $TZ. The arithmetic on a loaded zone lives in tz_rules.c. */
#include "tz_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cw_tz utc_zone = {.name = "UTC", .builtin = 1};
static const cw_tz local_utc_zone = {.name = "UTC", .builtin = 1}; /* time.Local fallback */

/* ---------------------------------------------------------------- TZif */

typedef struct dio {
    const unsigned char *p;
    uint64_t n;
    int error;
} dio;

static const unsigned char *dio_read(dio *d, uint64_t k)
{
    if (k == 0) return d->p; /* (no arithmetic on a NULL p) */
    if (d->n < k) {
        d->p = NULL;
        d->n = 0;
        d->error = 1;
        return NULL;
    }
    const unsigned char *r = d->p;
    d->p += k;
    d->n -= k;
    return r;
}

static int dio_big4(dio *d, uint32_t *out)
{
    const unsigned char *p = dio_read(d, 4);
    if (!p) return 0;
    *out = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return 1;
}

#define BAD_DATA "malformed time zone information"

static void tz_free(cw_tz *z)
{
    if (!z || z->builtin) return;
    cw_free(z->name);
    cw_free(z->zone_off);
    cw_free(z->zone_dst);
    cw_free(z->tx_when);
    cw_free(z->tx_zone);
    cw_free(z);
}

void cw_tz_release(const cw_tz *z)
{
    tz_free((cw_tz *)z);
}

static size_t first_zone(const cw_tz *z)
{
    int used = 0; /* is zone 0 the target of some transition? */
    for (size_t i = 0; i < z->ntx && !used; i++)
        used = z->tx_zone[i] == 0;
    if (!used) return 0;
    if (z->ntx > 0 && z->zone_dst[z->tx_zone[0]]) {
        for (size_t zi = z->tx_zone[0]; zi-- > 0;)
            if (!z->zone_dst[zi]) return zi;
    }
    for (size_t zi = 0; zi < z->nzone; zi++)
        if (!z->zone_dst[zi]) return zi;
    return 0;
}

/* Go fills a one-entry cache with the zone in force when the file is read; lookups
 * inside it return it without the search (and, after the last transition, with the
 * interval tzset gave for that moment), which can differ from an uncached lookup. */
static void fill_cache(cw_tz *z)
{
    int64_t now = cw_now();
    for (size_t i = 0; i < z->ntx; i++) {
        if (z->tx_when[i] <= now && (i + 1 == z->ntx || now < z->tx_when[i + 1])) {
            z->cache_ok = 1;
            z->cache_start = z->tx_when[i];
            z->cache_end = TZ_OMEGA;
            z->cache_off = z->zone_off[z->tx_zone[i]];
            if (i + 1 < z->ntx) {
                z->cache_end = z->tx_when[i + 1];
            } else if (z->ext.ok) {
                int64_t s, e;
                z->cache_off = cw_tz_extend_eval(&z->ext, z->cache_start, now, &s, &e);
                z->cache_start = s;
                z->cache_end = e;
            }
            return;
        }
    }
}

int cw_tz_from_tzif(const char *name, const unsigned char *data, size_t len, const cw_tz **out,
                    cwork_error *err)
{
    dio d = {data, len, 0};
    const unsigned char *p = dio_read(&d, 4);
    if (!p || memcmp(p, "TZif", 4) != 0) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    p = dio_read(&d, 16);
    if (!p) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    int version;
    switch (p[0]) {
    case 0:
        version = 1;
        break;
    case '2':
        version = 2;
        break;
    case '3':
        version = 3;
        break;
    default:
        return cw_error(err, CWORK_EINVAL, BAD_DATA);
    }
    enum { N_UTCLOCAL, N_STDWALL, N_LEAP, N_TIME, N_ZONE, N_CHAR };
    uint64_t n[6];
    for (int i = 0; i < 6; i++) {
        uint32_t v;
        if (!dio_big4(&d, &v)) return cw_error(err, CWORK_EINVAL, BAD_DATA);
        n[i] = v;
    }
    int is64 = 0;
    if (version > 1) { /* skip the 32-bit data and the second header's magic */
        uint64_t skip = n[N_TIME] * 4 + n[N_TIME] + n[N_ZONE] * 6 + n[N_CHAR] + n[N_LEAP] * 8 +
                        n[N_STDWALL] + n[N_UTCLOCAL] + 4 + 16;
        dio_read(&d, skip);
        is64 = 1;
        for (int i = 0; i < 6; i++) {
            uint32_t v;
            if (!dio_big4(&d, &v)) return cw_error(err, CWORK_EINVAL, BAD_DATA);
            n[i] = v;
        }
    }
    uint64_t size = is64 ? 8 : 4;
    dio txtimes = {dio_read(&d, n[N_TIME] * size), n[N_TIME] * size, 0};
    const unsigned char *txzones = dio_read(&d, n[N_TIME]);
    dio zonedata = {dio_read(&d, n[N_ZONE] * 6), n[N_ZONE] * 6, 0};
    dio_read(&d, n[N_CHAR]); /* abbreviations: only their count is checked */
    dio_read(&d, n[N_LEAP] * (size + 4));
    dio_read(&d, n[N_STDWALL]);
    dio_read(&d, n[N_UTCLOCAL]);
    if (d.error) return cw_error(err, CWORK_EINVAL, BAD_DATA);
    const char *rest = (const char *)d.p;
    size_t rest_len = d.n;
    if (n[N_ZONE] == 0) return cw_error(err, CWORK_EINVAL, BAD_DATA);

    cw_tz *z = cw_calloc(1, sizeof *z);
    if (!z) return cw_error(err, CWORK_ENOMEM, "out of memory");
    z->nzone = n[N_ZONE];
    z->ntx = n[N_TIME] ? n[N_TIME] : 1; /* Go adds one transition at alpha when none */
    z->name = cw_strdup(name);
    z->zone_off = cw_calloc(z->nzone, sizeof *z->zone_off);
    z->zone_dst = cw_calloc(z->nzone, 1);
    z->tx_when = cw_calloc(z->ntx, sizeof *z->tx_when);
    z->tx_zone = cw_calloc(z->ntx, 1);
    if (!z->name || !z->zone_off || !z->zone_dst || !z->tx_when || !z->tx_zone) {
        tz_free(z);
        return cw_error(err, CWORK_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < z->nzone; i++) {
        uint32_t off = 0; /* the sizes were checked above: the read cannot fail */
        dio_big4(&zonedata, &off);
        const unsigned char *b = dio_read(&zonedata, 2);
        z->zone_off[i] = (int32_t)off;
        z->zone_dst[i] = b[0] != 0;
        if (b[1] >= n[N_CHAR]) {
            tz_free(z);
            return cw_error(err, CWORK_EINVAL, BAD_DATA);
        }
    }
    for (size_t i = 0; i < n[N_TIME]; i++) {
        const unsigned char *t = dio_read(&txtimes, size);
        uint64_t v = 0;
        for (uint64_t k = 0; k < size; k++)
            v = v << 8 | t[k];
        z->tx_when[i] = is64 ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v;
        if (txzones[i] >= z->nzone) {
            tz_free(z);
            return cw_error(err, CWORK_EINVAL, BAD_DATA);
        }
        z->tx_zone[i] = txzones[i];
    }
    if (n[N_TIME] == 0) {
        z->tx_when[0] = TZ_ALPHA;
        z->tx_zone[0] = 0;
    }
    if (rest_len > 2 && rest[0] == '\n' && rest[rest_len - 1] == '\n')
        cw_tz_parse_extend(rest + 1, rest_len - 2, &z->ext);
    z->first_zone = first_zone(z);
    fill_cache(z);
    *out = z;
    return 0;
}

/* ---------------------------------------------------------------- files */

/* Go's syscall.Errno texts for what opening and reading a file can give. */
static const char *errno_text(int e, char buf[32])
{
    switch (e) {
    case ENOENT:
        return "no such file or directory";
    case EISDIR:
        return "is a directory";
    case ENOTDIR:
        return "not a directory";
    case EACCES:
        return "permission denied";
    case EPERM:
        return "operation not permitted";
    case ENAMETOOLONG:
        return "file name too long";
    case ELOOP:
        return "too many levels of symbolic links";
    case EINVAL:
        return "invalid argument";
    case EIO:
        return "input/output error";
    case EMFILE:
        return "too many open files";
    case ENFILE:
        return "too many open files in system";
    case ENOMEM:
        return "cannot allocate memory";
    case ENXIO:
        return "no such device or address";
    case ENODEV:
        return "no such device";
    default:
        snprintf(buf, 32, "errno %d", e);
        return buf;
    }
}

/* Reads a whole file as Go's time.readFile: 0, or an errno (ENOENT included), or -1 for
 * a file over the size limit, or -2 when out of memory. */
static int read_file(const char *path, cw_buf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int rc = 0;
    char chunk[4096];
    for (;;) {
        ssize_t k = read(fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            rc = errno;
            break;
        }
        if (k == 0) break;
        cw_buf_append(out, chunk, (size_t)k);
        if (out->oom) {
            rc = -2;
            break;
        }
        if (out->len > TZ_MAX_FILE) {
            rc = -1;
            break;
        }
    }
    close(fd);
    return rc;
}

/* Go's loadLocation for one source (a directory, "" for an absolute name): 0 with *out,
 * ENOENT when the file is not there, else an error filled into err. */
static int load_from(const char *dir, const char *name, const cw_tz **out, cwork_error *err)
{
    cw_buf path, data;
    cw_buf_init(&path);
    cw_buf_init(&data);
    if (*dir) {
        cw_buf_puts(&path, dir);
        cw_buf_putc(&path, '/');
    }
    cw_buf_puts(&path, name);
    int rc;
    if (path.oom) {
        rc = cw_error(err, CWORK_ENOMEM, "out of memory");
    } else {
        int e = read_file(path.data, &data);
        char buf[32];
        if (e == ENOENT)
            rc = ENOENT;
        else if (e == -2)
            rc = cw_error(err, CWORK_ENOMEM, "out of memory");
        else if (e == -1)
            rc = cw_error(err, CWORK_EINVAL, "time: file %s is too large", path.data);
        else if (e != 0)
            rc = cw_error(err, CWORK_EINVAL, "%s", errno_text(e, buf));
        else
            rc = cw_tz_from_tzif(name, (const unsigned char *)(data.data ? data.data : ""),
                                 data.len, out, err);
    }
    cw_buf_free(&path);
    cw_buf_free(&data);
    return rc;
}

/* Tries the sources in order; the first error other than "not there" is the answer
 * when none has the zone, else "unknown time zone NAME". */
static int load_location(const char *name, const char *const *dirs, size_t ndirs, const cw_tz **out,
                         cwork_error *err)
{
    cwork_error first = {0};
    int have_first = 0;
    for (size_t i = 0; i < ndirs; i++) {
        cwork_error e = {0};
        int rc = load_from(dirs[i], name, out, &e);
        if (rc == 0) return 0;
        if (rc == CWORK_ENOMEM) return cw_error(err, CWORK_ENOMEM, "out of memory");
        if (rc != ENOENT && !have_first) {
            first = e;
            have_first = 1;
        }
    }
    if (have_first) return cw_error(err, first.code, "%s", first.message);
    return cw_error(err, CWORK_EINVAL, "unknown time zone %s", name);
}

static const char *const platform_dirs[] = {"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/",
                                            "/usr/lib/locale/TZ/"};
#define N_PLATFORM (sizeof platform_dirs / sizeof platform_dirs[0])

/* ---------------------------------------------------------------- the environment */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char *zoneinfo_dir;      /* $ZONEINFO at first use (a directory), or NULL */
static const cw_tz *local_zone; /* time.Local, set once */

static void init_env(void)
{
    const char *zi = getenv("ZONEINFO");
    if (zi && *zi) zoneinfo_dir = cw_strdup(zi);

    const char *tz = getenv("TZ");
    const cw_tz *z = NULL;
    cwork_error e = {0};
    if (!tz) {
        static const char *const etc[] = {"/etc"};
        load_location("localtime", etc, 1, &z, &e);
    } else if (*tz) {
        if (tz[0] == ':') tz++;
        if (tz[0] == '/') {
            static const char *const abs[] = {""};
            load_location(tz, abs, 1, &z, &e);
        } else if (*tz && strcmp(tz, "UTC") != 0) {
            load_location(tz, platform_dirs, N_PLATFORM, &z, &e);
        }
    }
    if (z) {
        cw_tz *lz = (cw_tz *)z;
        if (!tz || strcmp(tz, "/etc/localtime") == 0) {
            char *n = cw_strdup("Local");
            if (n) {
                cw_free(lz->name);
                lz->name = n;
            }
        }
        lz->builtin = 1;
        local_zone = lz;
    } else {
        local_zone = &local_utc_zone;
    }
}

const cw_tz *cw_tz_utc(void)
{
    return &utc_zone;
}

const cw_tz *cw_tz_local(void)
{
    pthread_once(&env_once, init_env);
    return local_zone;
}

int cw_tz_is_local(const cw_tz *z)
{
    return z == cw_tz_local();
}

const char *cw_tz_name(const cw_tz *z)
{
    return z->name;
}

int cw_tz_load(const char *name, size_t len, const cw_tz **out, cwork_error *err)
{
    if (len == 0 || (len == 3 && memcmp(name, "UTC", 3) == 0)) {
        *out = &utc_zone;
        return 0;
    }
    if (len == 5 && memcmp(name, "Local", 5) == 0) {
        *out = cw_tz_local();
        return 0;
    }
    int dotdot = 0;
    for (size_t i = 0; i + 1 < len; i++)
        dotdot |= name[i] == '.' && name[i + 1] == '.';
    if (dotdot || name[0] == '/' || name[0] == '\\')
        return cw_error(err, CWORK_EINVAL, "time: invalid location name");
    if (memchr(name, '\0', len)) /* what opening such a path gives in Go */
        return cw_error(err, CWORK_EINVAL, "invalid argument");
    char *nm = cw_strndup(name, len);
    if (!nm) return cw_error(err, CWORK_ENOMEM, "out of memory");
    pthread_once(&env_once, init_env);
    cwork_error first = {0};
    int have_first = 0, rc;
    size_t zl = zoneinfo_dir ? strlen(zoneinfo_dir) : 0;
    if (zl > 0 && !(zl > 4 && strcmp(zoneinfo_dir + zl - 4, ".zip") == 0)) {
        rc = load_from(zoneinfo_dir, nm, out, &first);
        if (rc == 0) {
            cw_free(nm);
            return 0;
        }
        have_first = rc != ENOENT;
    }
    rc = load_location(nm, platform_dirs, N_PLATFORM, out, err);
    cw_free(nm);
    if (rc != 0 && have_first) return cw_error(err, first.code, "%s", first.message);
    return rc;
}
