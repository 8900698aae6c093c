package io.aqelens.listener;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.TreeSet;

/**
 * Bulk reads for the Python capture recorder: one Py4J call per shuffle instead of several per
 * map task. Arguments and results are byte arrays because Py4J moves a {@code byte[]} in one
 * transfer, while every element of any other array would be a round trip.
 */
public final class Bulk {
    private Bulk() {}

    /**
     * {@code MapStatus.getSizeForBlock(r)} of every map for the reducers in {@code wanted}
     * (big-endian int32s), read from the driver's MapOutputTrackerMaster.
     *
     * <p>Result (big-endian): int32 maps, int32 reducers asked, int32 length + UTF-8 of the
     * MapStatus class names (comma separated), one byte per map (1 present, 0 missing), then
     * the sizes as int64, reducer by reducer (row {@code k} holds every map's size for
     * {@code wanted[k]}; -1 for a missing map). Null when the shuffle is unregistered.
     */
    public static byte[] mapSizes(Object sparkContext, int shuffleId, byte[] wanted) throws Exception {
        Object[] statuses = MapSizes.mapStatuses(sparkContext, shuffleId);
        if (statuses == null) {
            return null;
        }
        ByteBuffer in = ByteBuffer.wrap(wanted);
        int k = wanted.length / 4;
        int[] reducers = new int[k];
        for (int i = 0; i < k; i++) {
            reducers[i] = in.getInt();
        }
        int nMaps = statuses.length;
        TreeSet<String> classes = new TreeSet<>();
        for (Object ms : statuses) {
            if (ms != null) {
                classes.add(ms.getClass().getSimpleName());
            }
        }
        byte[] names = String.join(",", classes).getBytes(StandardCharsets.UTF_8);
        ByteBuffer out = ByteBuffer.allocate(12 + names.length + nMaps + 8 * k * nMaps);
        out.putInt(nMaps).putInt(k).putInt(names.length).put(names);
        for (Object ms : statuses) {
            out.put((byte) (ms == null ? 0 : 1));
        }
        java.lang.reflect.Method[] getter = new java.lang.reflect.Method[1];
        Class<?>[] seen = new Class<?>[1];
        long[] row = new long[nMaps];
        for (int r : reducers) {
            for (int m = 0; m < nMaps; m++) {
                Object ms = statuses[m];
                row[m] = ms == null ? -1 : size(ms, r, getter, seen);
            }
            for (long x : row) {
                out.putLong(x);
            }
        }
        return out.array();
    }

    private static long size(Object ms, int r, java.lang.reflect.Method[] getter, Class<?>[] seen) {
        try {
            if (seen[0] != ms.getClass()) {
                getter[0] = ms.getClass().getMethod("getSizeForBlock", int.class);
                getter[0].setAccessible(true);
                seen[0] = ms.getClass();
            }
            return ((Number) getter[0].invoke(ms, r)).longValue();
        } catch (Throwable e) {
            return -1;
        }
    }
}
