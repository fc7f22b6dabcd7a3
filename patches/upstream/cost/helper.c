#include <valgrind/callgrind.h>
void ten_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void ten_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void ten_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
int ten_running(void) { return RUNNING_ON_VALGRIND; }
