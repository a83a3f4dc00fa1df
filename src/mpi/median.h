/* median.h - the one median the MPI library takes: of the closed loop's last measured
 * times (native_feedback.c), of each rank's lateness over a monitor period
 * (monitor_source_automatic.c) and over a persistent request's last starts
 * (arrival_history.c). The median, not the mean, because where ranks share cores one call
 * in a few is milliseconds off (a rank descheduled), and one such call must not move a
 * prediction or a verdict. */
#ifndef PAPCOLL_MPI_MEDIAN_H
#define PAPCOLL_MPI_MEDIAN_H

/* The most values median_of takes: it sorts a copy on the stack (insertion sort: the lists
 * are a few numbers long). */
enum { MEDIAN_MOST_VALUES = 16 };

/* The middle value of values[0 .. count - 1] (count <= MEDIAN_MOST_VALUES), or the mean of
 * the middle two where count is even: over two values the median is their mean. 0 where
 * count is 0. values is not changed. */
double median_of(const double *values, int count);

#endif /* PAPCOLL_MPI_MEDIAN_H */
