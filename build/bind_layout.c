/* The layout of libmariadb's MYSQL_BIND as the installed header defines it, for the test
   that checks src/driver/libmariadb.rs against it. */
#include <stddef.h>
#include <mysql.h>

size_t eb_mysql_bind_size(void) { return sizeof(MYSQL_BIND); }

size_t eb_mysql_bind_offset(int field) {
  switch (field) {
  case 0: return offsetof(MYSQL_BIND, length);
  case 1: return offsetof(MYSQL_BIND, is_null);
  case 2: return offsetof(MYSQL_BIND, buffer);
  case 3: return offsetof(MYSQL_BIND, buffer_length);
  case 4: return offsetof(MYSQL_BIND, buffer_type);
  case 5: return offsetof(MYSQL_BIND, is_unsigned);
  case 6: return offsetof(MYSQL_BIND, extension);
  default: return (size_t)-1;
  }
}
