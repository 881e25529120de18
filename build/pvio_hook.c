/* Saves the event driver one system call per statement.

   In non-blocking mode libmariadb sends a request and at once tries to read the answer
   (ma_pvio_read_async): the server has had no time to answer, so that read fails with
   EAGAIN, and only then does the library ask its caller to wait for the socket. Measured
   on oltp_point_select at 16 connections, 0.8 of the 1.8 reads per statement were these.

   eb_skip_read_after_write gives one connection a copy of its socket methods whose first
   read after a write reports EAGAIN without asking the kernel. The library then asks to
   wait for reading, as it would have; the event loop waits for the socket's next readable
   edge, which the answer makes (it cannot have come before the request), and the library's
   next read is a real one. The socket plugin's own functions do all the I/O. */
#include <errno.h>
#include <pthread.h>
#include <mysql.h>
#include <ma_pvio.h>

static PVIO_METHODS hooked;
static PVIO_METHODS *original;
static pthread_mutex_t hooked_lock = PTHREAD_MUTEX_INITIALIZER;

/* The connection this thread last wrote to: a coroutine's write and the read after it run
   on one event-loop thread without another connection's I/O in between. */
static __thread MARIADB_PVIO *just_wrote;

/* Reads answered without a system call, over the process (for tests and benches). */
static unsigned long long skipped;

unsigned long long eb_reads_skipped(void) { return __atomic_load_n(&skipped, __ATOMIC_RELAXED); }

static ssize_t write_then_mark(MARIADB_PVIO *pvio, const uchar *buffer, size_t length) {
  ssize_t written = original->async_write(pvio, buffer, length);
  just_wrote = written >= 0 ? pvio : NULL;
  return written;
}

static ssize_t read_unless_just_wrote(MARIADB_PVIO *pvio, uchar *buffer, size_t length) {
  if (just_wrote == pvio) {
    just_wrote = NULL;
    __atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);
    errno = EAGAIN;
    return -1;
  }
  return original->async_read(pvio, buffer, length);
}

/* 1 if the hook is on for `mysql` (connected, non-blocking), 0 if left as it was: no
   connection, TLS (its reads do not go through these methods), or another plugin's
   methods than the first connection's. */
int eb_skip_read_after_write(MYSQL *mysql) {
  MARIADB_PVIO *pvio = mysql->net.pvio;
  int hooked_now = 0;
  if (!pvio || pvio->ctls || !pvio->methods->async_read || !pvio->methods->async_write)
    return 0;
  pthread_mutex_lock(&hooked_lock);
  if (!original) {
    original = pvio->methods;
    hooked = *original;
    hooked.async_read = read_unless_just_wrote;
    hooked.async_write = write_then_mark;
  }
  if (pvio->methods == original) {
    pvio->methods = &hooked;
    hooked_now = 1;
  }
  pthread_mutex_unlock(&hooked_lock);
  if (just_wrote == pvio)
    just_wrote = NULL;
  return hooked_now;
}

/* The hook reaches into MARIADB_PVIO, a private struct whose layout is that of the headers
   it was compiled with: it is used only when the library loaded at run time is the same
   release (major.minor.patch), else connections keep libmariadb's own methods.
   Returns the version the hook was built for; *loaded gets the library's. */
unsigned long eb_hook_built_for(unsigned long *loaded) {
  *loaded = mysql_get_client_version();
  return MARIADB_PACKAGE_VERSION_ID;
}
